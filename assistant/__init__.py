"""Assistant: a desktop personal assistant that remembers."""

__version__ = "0.1.0"
APP_NAME = "Assistant"
