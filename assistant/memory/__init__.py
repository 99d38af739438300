"""Working, conversation and semantic memory (no Qt here)."""

from assistant.memory.conversations import (
    Conversation,
    ConversationHit,
    ConversationInfo,
    ConversationNotFoundError,
    ConversationStore,
    Message,
    PromptWindow,
)
from assistant.memory.embedding import Embedder
from assistant.memory.items import MemoryChange, MemoryItem, SearchHit, Source
from assistant.memory.ranking import SearchConfig
from assistant.memory.semantic import EmbeddingStatus, SemanticMemory
from assistant.memory.working import WorkingMemory, WorkingMemoryStore

__all__ = [
    "Conversation",
    "ConversationHit",
    "ConversationInfo",
    "ConversationNotFoundError",
    "ConversationStore",
    "Embedder",
    "EmbeddingStatus",
    "MemoryChange",
    "MemoryItem",
    "Message",
    "PromptWindow",
    "SearchConfig",
    "SearchHit",
    "SemanticMemory",
    "Source",
    "WorkingMemory",
    "WorkingMemoryStore",
]
