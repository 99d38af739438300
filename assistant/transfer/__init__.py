"""Export and import: the app's own JSON format, ChatGPT's and Claude's exports (no Qt).

An import is read and validated completely into an `ImportPlan` before anything is written;
an error names the bad field with its path ("conversations[2].messages[5].role: ...") and
changes nothing. Other apps' exports are streamed one conversation at a time and read again
when applied; a conversation that cannot be read is skipped and named. Applying a plan never
overwrites: a conversation or memory whose id exists is skipped or added as a copy with a new
id, as the caller chooses.
"""

from assistant.transfer.apply import COPY_SUFFIX, apply_import
from assistant.transfer.chatgpt import CHATGPT_TITLE
from assistant.transfer.claude import CLAUDE_TITLE
from assistant.transfer.export import (
    EXPORTED_STATES,
    FORMAT,
    FORMAT_VERSION,
    export_data,
    export_summary,
    write_export,
)
from assistant.transfer.markdown import conversation_markdown
from assistant.transfer.plan import (
    FORMAT_NAMES,
    POLICIES,
    ConflictPolicy,
    ImportedConversation,
    ImportFormat,
    ImportPlan,
    ImportResult,
    PlannedConversation,
    Progress,
    Stores,
    StoreSet,
    SuggestedMemory,
    Unreadable,
    counted,
)
from assistant.transfer.reader import load_import, parse_import, read_conversations
from assistant.transfer.sources import ImportSource, find_source
from assistant.transfer.stream import ImportCancelledError

__all__ = [
    "CHATGPT_TITLE",
    "CLAUDE_TITLE",
    "COPY_SUFFIX",
    "EXPORTED_STATES",
    "FORMAT",
    "FORMAT_NAMES",
    "FORMAT_VERSION",
    "POLICIES",
    "ConflictPolicy",
    "ImportCancelledError",
    "ImportFormat",
    "ImportPlan",
    "ImportResult",
    "ImportSource",
    "ImportedConversation",
    "PlannedConversation",
    "Progress",
    "StoreSet",
    "Stores",
    "SuggestedMemory",
    "Unreadable",
    "apply_import",
    "conversation_markdown",
    "counted",
    "export_data",
    "export_summary",
    "find_source",
    "load_import",
    "parse_import",
    "read_conversations",
    "write_export",
]
