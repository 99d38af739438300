"""The memory sidebar: memories, their detail and history, the timeline."""
