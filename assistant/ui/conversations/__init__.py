"""The conversation list and the search across conversations."""
