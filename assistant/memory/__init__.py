"""Working, conversation and semantic memory, and their files (no Qt here).

The names below are the package's face, for the rest of the app; each loads its module on
first use (PEP 562), so that `import assistant.memory` stays light and one store does not load
the others (or numpy, or the embedding model).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from assistant.lazy import lazy_getattr

if TYPE_CHECKING:
    from assistant.memory.conversation_file import Conversation, is_valid_id
    from assistant.memory.conversation_listing import ConversationInfo
    from assistant.memory.conversation_scan import ConversationNotFoundError
    from assistant.memory.conversations import (
        DEFAULT_TITLE,
        ConversationExistsError,
        ConversationStore,
        ConversationWrite,
        new_conversation,
    )
    from assistant.memory.edits import ChangedSinceError, MemoryEdit, can_redo, redo, undo
    from assistant.memory.embedding import Embedder, LazyEmbedder, embedding_batches
    from assistant.memory.embedding_upkeep import EmbeddingStatus
    from assistant.memory.inbox import Change, Inbox, Proposal
    from assistant.memory.items import (
        KINDS,
        EventType,
        MemoryChange,
        MemoryEvent,
        MemoryItem,
        MemoryKind,
        MemoryState,
        Origin,
        SearchHit,
        Source,
        listing_order,
    )
    from assistant.memory.local_embedder import LocalEmbedder
    from assistant.memory.message_index import ConversationHit
    from assistant.memory.messages import (
        AttachedFile,
        Message,
        check_messages,
        estimate_tokens,
    )
    from assistant.memory.openai_embedder import OpenAIEmbedder
    from assistant.memory.ranking import SearchConfig
    from assistant.memory.reply_stats import ReplyStats
    from assistant.memory.review import Review, Reviewed
    from assistant.memory.scopes import EVERYWHERE, MemoryScope, Scope
    from assistant.memory.semantic import MAX_TEXT_CHARS, ForgottenFactError, SemanticMemory
    from assistant.memory.topics import Topic, TopicStore
    from assistant.memory.working import WorkingMemory, WorkingMemoryStore

_MODULES = {
    "conversation_file": ("Conversation", "is_valid_id"),
    "conversation_listing": ("ConversationInfo",),
    "conversation_scan": ("ConversationNotFoundError",),
    "conversations": (
        "DEFAULT_TITLE",
        "ConversationExistsError",
        "ChangedSinceError",
        "ConversationStore",
        "ConversationWrite",
        "new_conversation",
    ),
    "messages": ("AttachedFile", "Message", "check_messages", "estimate_tokens"),
    "edits": ("ChangedSinceError", "MemoryEdit", "can_redo", "redo", "undo"),
    "embedding": ("Embedder", "LazyEmbedder", "embedding_batches"),
    "embedding_upkeep": ("EmbeddingStatus",),
    "inbox": ("Change", "Inbox", "Proposal"),
    "items": (
        "KINDS",
        "EventType",
        "MemoryChange",
        "MemoryEvent",
        "MemoryItem",
        "MemoryKind",
        "MemoryState",
        "Origin",
        "SearchHit",
        "Source",
        "listing_order",
    ),
    "local_embedder": ("LocalEmbedder",),
    "message_index": ("ConversationHit",),
    "openai_embedder": ("OpenAIEmbedder",),
    "ranking": ("SearchConfig",),
    "review": ("Review", "Reviewed"),
    "scopes": ("EVERYWHERE", "MemoryScope", "Scope"),
    "reply_stats": ("ReplyStats",),
    "semantic": ("MAX_TEXT_CHARS", "ForgottenFactError", "SemanticMemory"),
    "topics": ("Topic", "TopicStore"),
    "working": ("WorkingMemory", "WorkingMemoryStore"),
}
_HOME = {name: module for module, names in _MODULES.items() for name in names}

__all__ = [
    "DEFAULT_TITLE",
    "EVERYWHERE",
    "KINDS",
    "MAX_TEXT_CHARS",
    "AttachedFile",
    "Change",
    "ChangedSinceError",
    "Conversation",
    "ConversationExistsError",
    "ConversationHit",
    "ConversationInfo",
    "ConversationNotFoundError",
    "ConversationStore",
    "ConversationWrite",
    "Embedder",
    "EmbeddingStatus",
    "EventType",
    "ForgottenFactError",
    "Inbox",
    "LazyEmbedder",
    "LocalEmbedder",
    "MemoryChange",
    "MemoryEdit",
    "MemoryEvent",
    "MemoryItem",
    "MemoryKind",
    "MemoryScope",
    "MemoryState",
    "Message",
    "OpenAIEmbedder",
    "Origin",
    "Proposal",
    "ReplyStats",
    "Review",
    "Reviewed",
    "Scope",
    "SearchConfig",
    "SearchHit",
    "SemanticMemory",
    "Source",
    "Topic",
    "TopicStore",
    "WorkingMemory",
    "WorkingMemoryStore",
    "can_redo",
    "check_messages",
    "embedding_batches",
    "estimate_tokens",
    "is_valid_id",
    "listing_order",
    "new_conversation",
    "redo",
    "undo",
]


__getattr__ = lazy_getattr(__name__, _HOME)
