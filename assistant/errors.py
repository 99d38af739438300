"""One error tree for the whole app; third-party errors are translated at the boundary."""


class AssistantError(Exception):
    """Base of every error the app reports to the user; the message is shown as is."""


class ProviderError(AssistantError):
    """The model server failed, refused the request or returned something unusable.

    `status` says which in a few words, for the status bar ("Request refused (HTTP 400)").
    """

    def __init__(self, message: str, *, status: str = "Connection problem") -> None:
        super().__init__(message)
        self.status = status


def status_of(error: AssistantError) -> str:
    """What failed in a few words: a provider error's `status`, else "Reply failed"."""
    return error.status if isinstance(error, ProviderError) else "Reply failed"


class ContextOverflowError(ProviderError):
    """The prompt did not fit the model's context window; the numbers are tokens, if known."""

    def __init__(
        self, message: str, *, context_tokens: int | None, prompt_tokens: int | None
    ) -> None:
        super().__init__(message, status="Request too long")
        self.context_tokens = context_tokens
        self.prompt_tokens = prompt_tokens


class ImagesRefusedError(ProviderError):
    """The model does not take images and the message carries some: nothing was sent, and the
    message (its text and files) stays for Retry, with this model or another."""

    def __init__(self, model: str, names: tuple[str, ...] = ()) -> None:
        self.model = model
        self.names = names
        what = ", ".join(names) if names else "the attached image"
        super().__init__(
            f"{model} does not accept images, so {what} could not be sent and this message was "
            "not answered. Choose a model that sees images (the picker above the chat) and "
            "Retry, or send your text again without the image.",
            status="Connected",  # the model was known to refuse them: nothing was sent
        )


class ToolError(AssistantError):
    """A tool was called wrongly or failed; the message goes back to the model."""


class StorageError(AssistantError):
    """A file in the data directory could not be read or written."""


class CredentialError(AssistantError):
    """The API key could not be stored in or read from the OS keyring."""


class InvalidImportError(AssistantError):
    """An import file is malformed; nothing was changed."""
