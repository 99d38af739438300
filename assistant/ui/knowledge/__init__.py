"""The user's files in the window: the knowledge service's bridge, the Knowledge page."""
