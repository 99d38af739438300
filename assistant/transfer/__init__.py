"""Export and import: the app's own JSON format and ChatGPT's `conversations.json` (no Qt).

An import is parsed and validated completely into an `ImportPlan` before anything is written;
an error names the bad field with its path ("conversations[2].messages[5].role: ...") and
changes nothing. Applying a plan never overwrites: a conversation or memory whose id exists is
skipped or added as a copy with a new id, as the caller chooses.
"""

from assistant.transfer.apply import COPY_SUFFIX, apply_import
from assistant.transfer.chatgpt import CHATGPT_TITLE
from assistant.transfer.export import (
    EXPORTED_STATES,
    FORMAT,
    FORMAT_VERSION,
    export_data,
    export_summary,
    write_export,
)
from assistant.transfer.parse import load_import, parse_import
from assistant.transfer.plan import (
    FORMAT_NAMES,
    POLICIES,
    ConflictPolicy,
    ImportedConversation,
    ImportFormat,
    ImportPlan,
    ImportResult,
    Progress,
    Stores,
    StoreSet,
    counted,
)

__all__ = [
    "CHATGPT_TITLE",
    "COPY_SUFFIX",
    "EXPORTED_STATES",
    "FORMAT",
    "FORMAT_NAMES",
    "FORMAT_VERSION",
    "POLICIES",
    "ConflictPolicy",
    "ImportFormat",
    "ImportPlan",
    "ImportResult",
    "ImportedConversation",
    "Progress",
    "StoreSet",
    "Stores",
    "apply_import",
    "counted",
    "export_data",
    "export_summary",
    "load_import",
    "parse_import",
    "write_export",
]
