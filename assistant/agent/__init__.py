"""Chat provider, tools, tool-dispatch loop and curator (no Qt here)."""
