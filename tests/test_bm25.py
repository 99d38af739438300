"""The incremental index scores exactly like rank_bm25's BM25Okapi, through adds and removes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rank_bm25 import BM25Okapi

from assistant.memory.bm25 import COMMON_FROM, BM25Index
from assistant.memory.ranking import SearchConfig
from assistant.memory.text import query_terms, stem, terms, tokenize

WORDS = st.sampled_from(["tea", "coffee", "alice", "bob", "likes", "the", "a", "paris", "x1", "é"])
DOCS = st.lists(WORDS, min_size=0, max_size=12)


def reference_scores(
    docs: dict[int, list[str]], query: list[str], b: float = 0.75
) -> dict[int, float]:
    keys = sorted(docs)
    bm25 = BM25Okapi([docs[k] for k in keys], b=b)
    return dict(zip(keys, bm25.get_scores(query), strict=True))


def assert_matches(index: BM25Index, docs: dict[int, list[str]], query: list[str]) -> None:
    if not docs or not any(docs.values()):
        return  # rank_bm25 divides by zero on an empty corpus or vocabulary
    expected = reference_scores(docs, query, index.b)
    keys, scores = index.scores(query)
    got = dict(zip(keys.tolist(), scores.tolist(), strict=True))
    for key, value in expected.items():
        assert got.get(key, 0.0) == pytest.approx(value, abs=1e-9, rel=0), key
    matching = {k for k, d in docs.items() if set(d) & set(query)}
    assert set(got) == matching


@pytest.mark.timeout(600)  # 300 examples; a busy machine must not fail them on time
@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.tuples(st.just("add"), DOCS),
            st.tuples(st.just("remove"), st.integers(0, 40)),
        ),
        max_size=40,
    ),
    st.lists(WORDS, min_size=1, max_size=5),
)
def test_scores_equal_rank_bm25(ops: list[tuple[str, object]], query: list[str]) -> None:
    index = BM25Index()
    docs: dict[int, list[str]] = {}
    next_key = 0
    for op, arg in ops:
        if op == "add":
            assert isinstance(arg, list)
            index.add(next_key, arg)
            docs[next_key] = arg
            next_key += 1
        else:
            assert isinstance(arg, int)
            index.remove(arg)
            docs.pop(arg, None)
        assert len(index) == len(docs)
    assert_matches(index, docs, query)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(max_size=60), min_size=1, max_size=25), st.text(min_size=1, max_size=30))
def test_scores_equal_rank_bm25_on_free_text(texts: list[str], query: str) -> None:
    """On the terms the stores index (stems) and with the stores' parameters."""
    config = SearchConfig()
    index = BM25Index(config.bm25_k1, config.bm25_b)
    docs = {}
    for key, text in enumerate(texts):
        docs[key] = terms(text)
        index.add(key, docs[key])
    assert_matches(index, docs, query_terms(query)[0])


@settings(max_examples=100, deadline=None)
@given(st.lists(DOCS, min_size=1, max_size=20), st.lists(WORDS, min_size=1, max_size=5))
def test_a_document_scored_apart_scores_as_indexed(docs: list[list[str]], query: list[str]) -> None:
    """`score_documents` gives an indexed document's words the score the index gives it."""
    index = BM25Index(1.5, 0.4)
    index.add_many(range(len(docs)), docs)
    keys, scores = index.scores(query)
    got = dict(zip(keys.tolist(), scores.tolist(), strict=True))
    apart = index.score_documents(query, docs)
    assert apart == pytest.approx([got.get(key, 0.0) for key in range(len(docs))], abs=1e-9)
    qualified = index.score_documents(query, docs, require=query)
    found = {key for key, _ in index.top(query, len(docs), require=query)}
    assert [score is not None for score in qualified] == [key in found for key in range(len(docs))]


@settings(max_examples=100, deadline=None)
@given(
    st.lists(DOCS, max_size=30),
    st.lists(st.integers(0, 30), max_size=10),
    st.lists(WORDS, min_size=1, max_size=5),
)
def test_bulk_build_and_snapshot_equal_incremental(
    docs: list[list[str]], removed: list[int], query: list[str]
) -> None:
    incremental = BM25Index()
    for key, doc in enumerate(docs):
        incremental.add(key, doc)
    bulk = BM25Index()
    bulk.add_many(list(range(len(docs))), docs)
    for key in removed:
        incremental.remove(key)
        bulk.remove(key)
    restored = BM25Index.from_snapshot(incremental.snapshot())
    expected = dict(zip(*(a.tolist() for a in incremental.scores(query)), strict=True))
    for index in (bulk, restored):
        got = dict(zip(*(a.tolist() for a in index.scores(query)), strict=True))
        assert got.keys() == expected.keys()
        for key, value in expected.items():
            assert got[key] == pytest.approx(value, abs=1e-12)
        assert len(index) == len(incremental)
    restored.add(1000, ["tea", "new"])  # a restored index keeps growing
    assert restored.top(["new"], 5)[0][0] == 1000


def test_rebuild_after_many_removals_keeps_scores() -> None:
    rng = np.random.default_rng(1)
    vocab = [f"w{i}" for i in range(300)]
    index = BM25Index()
    docs: dict[int, list[str]] = {}
    for key in range(5000):
        doc = [vocab[i] for i in rng.integers(0, 300, size=rng.integers(1, 20))]
        index.add(key, doc)
        docs[key] = doc
    for key in list(docs)[:3500]:
        index.remove(key)
        del docs[key]
    assert len(index._doc_key) < 5000  # the postings were rebuilt
    assert_matches(index, docs, ["w1", "w2", "w2", "w299", "absent"])


def test_top_and_require() -> None:
    index = BM25Index()
    texts = ["Alice prefers tea", "Bob likes coffee", "the weather is nice", "what the"]
    for key, text in enumerate(texts):
        index.add(key, tokenize(text))
    top = index.top(tokenize("what does Alice drink, tea?"), 10)
    assert top[0][0] == 0
    assert {k for k, _ in top} == {0, 3}
    only_informative = index.top(tokenize("the what"), 10, require=["alice"])
    assert only_informative == []
    assert index.top(tokenize("coffee"), 1) == [(1, pytest.approx(index.scores(["coffee"])[1][0]))]
    with pytest.raises(KeyError):
        index.add(0, ["dup"])


def test_tokenizer_keeps_unicode_letters_and_digits() -> None:
    assert tokenize("Héllo, WORLD_42 naïve-café 東京!") == [
        "héllo",
        "world",
        "42",
        "naïve",
        "café",
        "東京",
    ]


def test_terms_are_stems_so_word_forms_match() -> None:
    assert terms("Peanuts, painting and the sisters") == ["peanut", "paint", "and", "the", "sister"]
    assert stem("peanut") == stem("peanuts")
    assert query_terms("the peanuts") == (["the", "peanut"], ["peanut"])


def test_prefix_finds_terms_as_typed() -> None:
    index = BM25Index()
    texts = ["my sister Ann", "a sister and a sistine chapel", "system tray", "the sis"]
    for key, text in enumerate(texts):
        index.add(key, terms(text))
    assert index.with_prefix("siste") == ["sister"]
    assert index.with_prefix("sis") == ["sister", "sis", "sistin"]  # most frequent first
    assert index.with_prefix("th") == []  # stop words are never expansions
    index.remove(0)
    index.remove(1)
    assert index.with_prefix("siste") == []


def test_a_word_in_most_documents_does_not_qualify_alone() -> None:
    index = BM25Index()
    texts = ["The user likes tea", "The user has a cat", "Bob likes tea"]
    texts += [f"The user said {i}" for i in range(COMMON_FROM - len(texts))]
    for key, text in enumerate(texts):
        index.add(key, terms(text))
        if key == 2:  # too few documents yet for any word to count as common
            assert not index.is_common("user")
    assert index.is_common("user") and not index.is_common("tea")
    found = index.top(terms("user tea"), 50, require=["user", "tea"])
    assert {key for key, _ in found} == {0, 2}  # "user" alone does not make a hit
    assert len(index.top(["user"], 50, require=["user"])) == COMMON_FROM - 1  # all common
