"""The chat pane: the conversation on screen, the composer, Markdown and code, find."""
