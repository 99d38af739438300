"""OpenAIEmbedder against the fake OpenAI server."""

from __future__ import annotations

import numpy as np
import pytest

from assistant.errors import ProviderError
from assistant.memory.embedding import EMBED_BATCH, Embedder
from assistant.memory.openai_embedder import POOLING_NOTICE, OpenAIEmbedder
from assistant.openai_errors import RetryPolicy
from tests.fake_openai import FakeOpenAI, Reply, hashed_embedding


@pytest.fixture
def embedder(fake_openai: FakeOpenAI) -> OpenAIEmbedder:
    client = fake_openai.client(max_retries=0, timeout=2.0)
    return OpenAIEmbedder(client, "embed-model", retry=RetryPolicy(max_retries=0))


def test_is_an_embedder(embedder: OpenAIEmbedder) -> None:
    typed: Embedder = embedder  # mypy checks the protocol
    assert typed.name == "embed-model"


def test_embeds_in_batches_in_order(fake_openai: FakeOpenAI, embedder: OpenAIEmbedder) -> None:
    texts = [f"note number {i} about topic{i % 7}" for i in range(600)]
    vectors = embedder.embed(texts)
    assert vectors.shape == (600, 64)
    assert vectors.dtype == np.float32
    batches = [r.body["input"] for r in fake_openai.requests_to("/embeddings")]
    assert [len(batch) for batch in batches] == [EMBED_BATCH] * 9 + [24]
    assert [text for batch in batches for text in batch] == texts
    expected = np.array([hashed_embedding(text) for text in texts], dtype=np.float32)
    assert np.allclose(vectors, expected, atol=1e-6)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_order_follows_the_response_index(
    fake_openai: FakeOpenAI, embedder: OpenAIEmbedder
) -> None:
    body = (
        '{"object": "list", "model": "m", "data": ['
        '{"object": "embedding", "index": 1, "embedding": [0.0, 2.0]},'
        '{"object": "embedding", "index": 0, "embedding": [3.0, 4.0]}]}'
    )
    fake_openai.enqueue_embeddings(Reply.raw(body))
    vectors = embedder.embed(["first", "second"])
    assert np.allclose(vectors, [[0.6, 0.8], [0.0, 1.0]])  # normalised by the embedder


def test_dim_is_probed_once_and_then_known(
    fake_openai: FakeOpenAI, embedder: OpenAIEmbedder
) -> None:
    assert embedder.dim == 64
    assert embedder.dim == 64
    assert len(fake_openai.requests) == 1
    assert embedder.embed([]).shape == (0, 64)
    assert len(fake_openai.requests) == 1


def test_dim_learned_from_the_first_embed(fake_openai: FakeOpenAI) -> None:
    embedder = OpenAIEmbedder(fake_openai.client(), "m")
    embedder.embed(["hello"])
    assert embedder.dim == 64
    assert len(fake_openai.requests) == 1


def test_given_dim_needs_no_request(fake_openai: FakeOpenAI) -> None:
    embedder = OpenAIEmbedder(fake_openai.client(), "m", dim=64)
    assert embedder.embed([]).shape == (0, 64)
    assert fake_openai.requests == []


def test_dim_mismatch_is_an_error(fake_openai: FakeOpenAI) -> None:
    embedder = OpenAIEmbedder(fake_openai.client(), "m", dim=32)
    with pytest.raises(ProviderError, match="size 64, expected 32"):
        embedder.embed(["x"])


def test_empty_strings_are_sent_as_a_space(
    fake_openai: FakeOpenAI, embedder: OpenAIEmbedder
) -> None:
    vectors = embedder.embed(["", "text"])  # the fake, like OpenAI, rejects ""
    assert fake_openai.requests[-1].body["input"] == [" ", "text"]
    assert vectors.shape == (2, 64)


def test_similar_texts_are_closer(embedder: OpenAIEmbedder) -> None:
    a, b, c = embedder.embed(["I love green tea", "green tea is lovely", "car insurance renewal"])
    assert a @ b > a @ c


def test_server_down_names_the_url_after_retrying_as_chat_does() -> None:
    with FakeOpenAI() as server:
        pass
    url = server.base_url
    sleeps: list[float] = []
    embedder = OpenAIEmbedder(server.client(timeout=1.0), "m", sleep=sleeps.append)
    with pytest.raises(ProviderError, match=f"Could not reach {url}.*Tried 4 times"):
        embedder.embed(["x"])
    assert len(sleeps) == 3 and sleeps == sorted(sleeps)  # backing off
    with pytest.raises(ProviderError, match="Could not reach") as again:
        embedder.embed(["x"])
    assert len(sleeps) == 3 and "Tried" not in str(again.value)  # still down: asked once


def test_a_rate_limit_waits_as_asked_and_goes_on(fake_openai: FakeOpenAI) -> None:
    sleeps: list[float] = []
    embedder = OpenAIEmbedder(fake_openai.client(max_retries=0), "m", sleep=sleeps.append)
    fake_openai.enqueue_embeddings(Reply.error(429, retry_after=2), Reply.error(503))
    assert embedder.embed(["x", "y"]).shape == (2, 64)
    assert sleeps[0] == 2.0 and 1.0 <= sleeps[1] <= 1.25  # Retry-After, then the backoff
    assert len(fake_openai.requests_to("/embeddings")) == 3


def test_wrong_key() -> None:
    with FakeOpenAI(required_api_key="sk-right") as server:
        embedder = OpenAIEmbedder(server.client(api_key="sk-wrong"), "m")
        with pytest.raises(ProviderError, match="rejected the API key"):
            embedder.embed(["x"])


def test_unknown_model() -> None:
    with FakeOpenAI(models=["nomic-embed-text"]) as server:
        embedder = OpenAIEmbedder(server.client(), "no-such-model")
        with pytest.raises(ProviderError) as caught:
            embedder.embed(["x"])
    assert str(caught.value) == "The embedding model 'no-such-model' was not found on the server."
    assert caught.value.__cause__ is not None


def test_ollama_style_404(fake_openai: FakeOpenAI, embedder: OpenAIEmbedder) -> None:
    fake_openai.enqueue_embeddings(
        Reply.raw('{"error": "model \\"x\\" not found, try pulling it first"}', status=404)
    )
    with pytest.raises(ProviderError, match="was not found on the server"):
        embedder.embed(["x"])


def test_404_without_a_model_message_blames_the_url(
    fake_openai: FakeOpenAI, embedder: OpenAIEmbedder
) -> None:
    fake_openai.enqueue_embeddings(
        Reply.raw("404 page not found", status=404, content_type="text/plain")
    )
    with pytest.raises(ProviderError, match="no embeddings endpoint"):
        embedder.embed(["x"])


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        (Reply.error(429, retry_after=1), "rate limiting"),
        (Reply.error(500), r"had an error \(HTTP 500\)"),
        (Reply.error(503), r"had an error \(HTTP 503\)"),
        (Reply.error(400, "input too long"), r"refused .*HTTP 400.*input too long"),
        (Reply.dropped(), "Could not reach"),
        (Reply.raw("this is not json"), "malformed"),
        (Reply.raw('{"object": "list", "data": []}'), "malformed"),
        (Reply.raw('{"object": "list", "data": [{"index": 0, "embedding": "!!"}]}'), "unusable"),
        (Reply.raw('{"object": "list", "data": [{"index": 0, "embedding": ["a"]}]}'), "unusable"),
        (Reply.raw('{"object": "list", "data": [{"index": 5, "embedding": [1.0]}]}'), "unusable"),
        (Reply.raw('{"object": "list", "data": [{"index": 0, "embedding": [1e999]}]}'), "NaN"),
    ],
)
def test_errors_become_provider_errors(
    fake_openai: FakeOpenAI, embedder: OpenAIEmbedder, reply: Reply, message: str
) -> None:
    fake_openai.enqueue_embeddings(reply)
    with pytest.raises(ProviderError, match=message):
        embedder.embed(["x"])


def test_zero_vectors_stay_zero(fake_openai: FakeOpenAI, embedder: OpenAIEmbedder) -> None:
    body = '{"object": "list", "data": [{"index": 0, "embedding": [0.0, 0.0]}]}'
    fake_openai.enqueue_embeddings(Reply.raw(body))
    assert embedder.embed(["x"]).tolist() == [[0.0, 0.0]]


def test_timeout_is_tried_once_more(fake_openai: FakeOpenAI) -> None:
    embedder = OpenAIEmbedder(fake_openai.client(timeout=0.2), "m", sleep=lambda _: None)
    fake_openai.enqueue_embeddings(Reply(delay=2.0), Reply(delay=2.0))
    with pytest.raises(ProviderError, match=r"did not answer in time.*Tried 2 times"):
        embedder.embed(["x"])


def test_vectors_of_different_sizes_are_unusable(
    fake_openai: FakeOpenAI, embedder: OpenAIEmbedder
) -> None:
    body = (
        '{"object": "list", "data": ['
        '{"index": 0, "embedding": [1.0, 0.0]}, {"index": 1, "embedding": [1.0]}]}'
    )
    fake_openai.enqueue_embeddings(Reply.raw(body))
    with pytest.raises(ProviderError) as caught:
        embedder.embed(["a", "b"])
    assert (
        str(caught.value)
        == "The server's embeddings are unusable: vectors of different sizes (1, 2)."
    )


def test_ragged_token_vectors_are_unusable(
    fake_openai: FakeOpenAI, embedder: OpenAIEmbedder
) -> None:
    body = '{"object": "list", "data": [{"index": 0, "embedding": [[1.0, 0.0], [1.0]]}]}'
    fake_openai.enqueue_embeddings(Reply.raw(body))
    with pytest.raises(ProviderError, match="unusable: the per-token vectors of a text differ"):
        embedder.embed(["a b"])


def test_token_vectors_are_mean_pooled_with_one_notice() -> None:
    notices: list[str] = []
    with FakeOpenAI(token_embeddings=True) as server:
        embedder = OpenAIEmbedder(server.client(), "m", on_notice=notices.append)
        vectors = embedder.embed(["red apple", "green apple", "apple"])
        embedder.embed(["more text"])
    words = {w: np.array(hashed_embedding(w)) for w in ("red", "apple")}
    pooled = (words["red"] + words["apple"]) / 2
    assert np.allclose(vectors[0], pooled / np.linalg.norm(pooled), atol=1e-6)
    assert vectors.shape == (3, 64)
    assert np.allclose(vectors[2], words["apple"], atol=1e-6)
    assert notices == [POOLING_NOTICE]
    assert embedder.pools_tokens
