"""`OpenAIEmbedder`: embeddings from any OpenAI-compatible `/embeddings` endpoint."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt
import openai
from openai.types import CreateEmbeddingResponse

from assistant.errors import ProviderError
from assistant.memory.embedding import embedding_batches
from assistant.openai_errors import CLIENT_ERRORS, RetryPolicy, provider_error, server_url
from assistant.redaction import add_secret

log = logging.getLogger(__name__)

_PROBE_TEXT = "dimension probe"
_UNUSABLE = "The server's embeddings are unusable"
POOLING_NOTICE = (
    "The embedding server sends a vector per word; Assistant averages them "
    "(a server started with pooling searches better)."
)


class OpenAIEmbedder:
    """An `Embedder` on an OpenAI-compatible `/embeddings` endpoint; rows are L2-normalised.

    `dim` is the vector size; unless given, the first access embeds a probe text to learn it.
    A server without pooling sends a vector per token: they are averaged, and `on_notice` hears
    so. A failed request is retried as a chat request is (`retry`, waiting with `sleep`), unless
    the server failed the last call too: then each call is tried once until one succeeds, so a
    server that is down does not hold up every search. Every failure is raised as a
    `ProviderError` whose message a user can act on.
    """

    def __init__(
        self,
        client: openai.OpenAI,
        model: str,
        *,
        dim: int | None = None,
        on_notice: Callable[[str], None] | None = None,
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        add_secret(client.api_key)
        self._client = client
        self.name = model
        self._dim = dim
        self._on_notice = on_notice
        self._retry = retry or RetryPolicy()
        self._sleep = sleep
        self._failing = False  # the last call failed: try once until one succeeds
        self.pools_tokens = False  # the server sends per-token vectors, which are averaged

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
        return server_url(self._client)

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Embed `texts` in order, a request per `EMBED_BATCH`; shape (len(texts), dim)."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        batches = [self._embed_batch(list(batch)) for batch in embedding_batches(texts)]
        vectors: npt.NDArray[np.float32] = np.concatenate(batches)
        return vectors

    def _embed_batch(self, texts: list[str]) -> npt.NDArray[np.float32]:
        # Some servers reject empty strings; a single space is accepted everywhere.
        inputs = [text or " " for text in texts]
        rows = self._rows(self._request(inputs), len(inputs))
        if not np.all(np.isfinite(rows)):
            raise ProviderError(f"{_UNUSABLE}: vectors with NaN or infinite values.")
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

    def _request(self, inputs: list[str]) -> CreateEmbeddingResponse:
        attempt = 0
        while True:
            try:
                response = self._client.embeddings.create(model=self.name, input=inputs)
            except CLIENT_ERRORS as err:
                if self._failing or not self._retry.allows(err, attempt):
                    self._failing = True
                    raise provider_error(
                        err,
                        self._client,
                        model=self.name,
                        purpose="embeddings",
                        attempts=attempt + 1,
                    ) from err
                delay = self._retry.delay(attempt, err)
                log.warning(
                    "Embedding request to %s failed (%s); retrying in %.2f s.",
                    self.server_url,
                    type(err).__name__,
                    delay,
                )
                self._sleep(delay)
                attempt += 1
            else:
                self._failing = False
                return response

    def _rows(self, response: CreateEmbeddingResponse, count: int) -> npt.NDArray[np.float64]:
        """The vectors of `response` in input order, checked for count and shape.

        An input's vector may come as one vector per token (a server without pooling): those
        are averaged into one.
        """
        try:
            items = sorted(response.data, key=lambda item: item.index)
            if [item.index for item in items] != list(range(count)):
                raise ValueError("their indices do not match the inputs")
            vectors = [self._vector(item.embedding) for item in items]
        except (ValueError, TypeError, AttributeError) as err:
            raise ProviderError(f"{_UNUSABLE}: {err}.") from err
        sizes = sorted({len(vector) for vector in vectors})
        if len(sizes) > 1:
            raise ProviderError(
                f"{_UNUSABLE}: vectors of different sizes ({', '.join(map(str, sizes))})."
            )
        if sizes == [0]:
            raise ProviderError(f"{_UNUSABLE}: empty vectors.")
        return np.array(vectors, dtype=np.float64)

    def _vector(self, embedding: object) -> npt.NDArray[np.float64]:
        """One input's vector; per-token vectors (a 2-D list) are mean-pooled."""
        try:
            array = np.array(embedding, dtype=np.float64)
        except ValueError as err:
            if isinstance(embedding, list) and embedding and isinstance(embedding[0], list):
                raise ValueError("the per-token vectors of a text differ in size") from err
            raise ValueError(f"a vector that is not a list of numbers ({err})") from err
        if array.ndim == 2 and array.shape[0] > 0:
            if not self.pools_tokens and self._on_notice is not None:
                self._on_notice(POOLING_NOTICE)
            self.pools_tokens = True
            return np.asarray(array.mean(axis=0), dtype=np.float64)
        if array.ndim != 1:
            raise ValueError(f"a vector with {array.ndim} dimensions")
        return array
