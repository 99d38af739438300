"""One error tree for the whole app; third-party errors are translated at the boundary."""


class AssistantError(Exception):
    """Base of every error the app reports to the user; the message is shown as is."""


class ProviderError(AssistantError):
    """The model server failed, refused the request or returned something unusable."""


class ContextOverflowError(ProviderError):
    """The prompt did not fit the model's context window; the numbers are tokens, if known."""

    def __init__(
        self, message: str, *, context_tokens: int | None, prompt_tokens: int | None
    ) -> None:
        super().__init__(message)
        self.context_tokens = context_tokens
        self.prompt_tokens = prompt_tokens


class ToolError(AssistantError):
    """A tool was called wrongly or failed; the message goes back to the model."""


class StorageError(AssistantError):
    """A file in the data directory could not be read or written."""


class CredentialError(AssistantError):
    """The API key could not be stored in or read from the OS keyring."""


class InvalidImportError(AssistantError):
    """An import file is malformed; nothing was changed."""
