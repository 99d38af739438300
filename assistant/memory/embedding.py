"""Embedders turn texts into unit vectors; the OpenAI one works with any compatible server."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt
import openai
from openai.types import CreateEmbeddingResponse

from assistant.errors import ProviderError


class Embedder(Protocol):
    """Something that embeds texts; `name` and `dim` identify its vector space."""

    name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Return one float32 row per text, shape (len(texts), dim)."""
        ...


_PROBE_TEXT = "dimension probe"
_MALFORMED = "The server returned a malformed embedding response"


class OpenAIEmbedder:
    """An `Embedder` on an OpenAI-compatible `/embeddings` endpoint; rows are L2-normalised.

    `dim` is the vector size; unless given, the first access embeds a probe text to learn it.
    Every failure is raised as a `ProviderError` whose message a user can act on.
    """

    batch_size = 256

    def __init__(self, client: openai.OpenAI, model: str, *, dim: int | None = None) -> None:
        self._client = client
        self.name = model
        self._dim = dim

    @property
    def dim(self) -> int:
        """The vector size, learned from the server on first use."""
        if self._dim is None:
            self._dim = int(self._embed_batch([_PROBE_TEXT]).shape[1])
        return self._dim

    @dim.setter
    def dim(self, value: int) -> None:
        self._dim = value

    @property
    def server_url(self) -> str:
        """The base URL the client talks to, for messages."""
        return str(self._client.base_url).rstrip("/")

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Embed `texts` in order, in batches of at most `batch_size`; shape (len(texts), dim)."""
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        batches = [
            self._embed_batch(texts[start : start + self.batch_size])
            for start in range(0, len(texts), self.batch_size)
        ]
        vectors: npt.NDArray[np.float32] = np.concatenate(batches)
        return vectors

    def _embed_batch(self, texts: list[str]) -> npt.NDArray[np.float32]:
        # Some servers reject empty strings; a single space is accepted everywhere.
        inputs = [text or " " for text in texts]
        try:
            response = self._client.embeddings.create(model=self.name, input=inputs)
        except openai.OpenAIError as err:
            raise self._translate(err) from err
        except (ValueError, TypeError, AttributeError) as err:
            # The client raises these on a body that is not JSON or has no `data`.
            raise ProviderError(f"{_MALFORMED} (from {self.server_url}).") from err
        rows = self._rows(response, len(inputs))
        if not np.all(np.isfinite(rows)):
            raise ProviderError(f"{_MALFORMED}: vectors with NaN or infinite values.")
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        # A zero vector stays zero: it matches nothing, which beats failing the whole batch.
        vectors: npt.NDArray[np.float32] = (rows / np.where(norms > 0, norms, 1.0)).astype(
            np.float32
        )
        if self._dim is not None and vectors.shape[1] != self._dim:
            raise ProviderError(
                f"The embedding model '{self.name}' returned vectors of size {vectors.shape[1]}, "
                f"expected {self._dim}."
            )
        self._dim = int(vectors.shape[1])
        return vectors

    def _rows(self, response: CreateEmbeddingResponse, count: int) -> npt.NDArray[np.float64]:
        """The vectors of `response` in input order, checked for count and shape."""
        try:
            items = sorted(response.data, key=lambda item: item.index)
            if [item.index for item in items] != list(range(count)):
                raise ValueError("indices do not match the inputs")
            rows = np.array([item.embedding for item in items], dtype=np.float64)
        except (ValueError, TypeError, AttributeError) as err:
            raise ProviderError(f"{_MALFORMED}: {err}.") from err
        if rows.ndim != 2 or rows.shape[1] == 0:
            raise ProviderError(f"{_MALFORMED}: vectors of unequal or zero size.")
        return rows

    def _translate(self, err: openai.OpenAIError) -> ProviderError:
        """A user-facing message for an error of the `openai` client."""
        url = self.server_url
        model = self.name
        if isinstance(err, openai.APITimeoutError):
            return ProviderError(f"The server at {url} did not answer in time.")
        if isinstance(err, openai.APIConnectionError):
            return ProviderError(f"Could not reach {url}. Is the server running?")
        if isinstance(err, openai.AuthenticationError):
            return ProviderError(f"The server rejected the API key ({url}).")
        if isinstance(err, openai.PermissionDeniedError):
            return ProviderError(f"The API key may not use the embedding model '{model}'.")
        if isinstance(err, openai.NotFoundError):
            detail = _server_message(err)
            if err.code == "model_not_found" or "model" in detail.lower():
                return ProviderError(f"The embedding model '{model}' was not found on the server.")
            return ProviderError(f"{url} has no embeddings endpoint (HTTP 404). Check the URL.")
        if isinstance(err, openai.RateLimitError):
            return ProviderError("The server is rate limiting requests; try again later.")
        if isinstance(err, openai.InternalServerError):
            return ProviderError(
                f"The server at {url} had an error (HTTP {err.status_code}); try again later."
            )
        if isinstance(err, openai.APIStatusError):
            return ProviderError(
                f"The server refused the embedding request (HTTP {err.status_code}): "
                f"{_server_message(err)}"
            )
        if isinstance(err, openai.APIResponseValidationError):
            return ProviderError(f"{_MALFORMED} (from {url}).")
        return ProviderError(f"Embedding failed: {err}")


def _server_message(err: openai.APIStatusError) -> str:
    """The server's own error message, without the client's "Error code: ..." prefix."""
    body = err.body
    if isinstance(body, dict):
        body = body.get("message")
    return body if isinstance(body, str) and body else err.message
