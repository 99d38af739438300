"""Working, conversation and semantic memory (no Qt here)."""
