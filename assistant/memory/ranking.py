"""Hybrid ranking: a weighted sum of the normalised keyword and meaning scores, plus boosts.

Each ranking's scores are divided by its best score among the candidates (cosines below 0 count
as 0), so 1 means "as good as the best in this ranking", and the two are mixed with the weight
`dense_weight`: the convex combination that Bruch et al. ("An Analysis of Fusion Functions for
Hybrid Retrieval", 2023) found better than reciprocal rank fusion, which stays available.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

import numpy as np
import numpy.typing as npt

from assistant.memory.items import MemoryItem, SearchHit

Ranking = list[tuple[int, float]]  # (slot, score) best first
_K = TypeVar("_K", bound=Hashable)


@dataclass(frozen=True)
class SearchConfig:
    """How search ranks: fusion depth and constant, relevance floor, boosts, dense search."""

    depth: int = 50  # how far down each ranking is fused
    fusion: Literal["convex", "rrf"] = "convex"
    dense_weight: float = 0.3  # share of the meaning score in the convex fusion
    rrf_k: int = 60
    # BM25Okapi's parameters; b below the usual 0.75 because memories and messages are short,
    # and a long one is rarely long because it is off topic.
    bm25_k1: float = 1.5
    bm25_b: float = 0.4
    # Conversation search scores a message with the one before it as context: its keyword
    # document holds both texts, and its meaning score may add `context_weight` times the
    # previous message's similarity (measured: it did not help on top of the keyword context).
    keyword_context: bool = True
    context_weight: float = 0.0
    # A query that names a period ("in May 2023", "last week") adds this to the relevance of
    # the messages written in it, and of the memories that hold from it (or were learned in it).
    date_weight: float = 0.25
    # ... and the best messages written in it join the candidates (see `periods`).
    period_candidates: bool = True
    # Conversation search finds a message also by the texts it is indexed under: the memories
    # extracted from it (`message_keys`).
    message_keys: bool = True
    # Conversation search adds this times its conversation's relevance (that of its summary,
    # 1 for the best) to a message's: the conversation first, then the message in it.
    summary_weight: float = 0.25
    # Conversation search adds this times the better relevance of a message's neighbours (the
    # messages just before and after it) to its own: an answer sits next to its question (see
    # `neighbours`). The weight of the other hints of where to look (a period, a summary).
    neighbour_weight: float = 0.25
    # Memory search finds a memory also by its context: the message it was learned from and
    # the one before it (see `memory_index`).
    source_context: bool = True
    # A query that names someone or something ("Caroline", "Lisbon") may add this to the
    # relevance of the results that mention every name (see `entities`; measured: it did not
    # help conversation search).
    entity_weight: float = 0.0
    min_similarity: float = 0.3  # below this cosine, meaning alone does not make a result
    importance_weight: float = 0.1
    recency_weight: float = 0.05
    recency_days: float = 30.0  # e-folding time of the recency boost
    # Dense search scores every vector exactly up to `exact_up_to` vectors. Above, it ranks them
    # by a projection and rescores the best exactly: `rescore_factor` per result wanted, and at
    # least `rescore_fraction` of all (more than a topic cluster, or recall drops).
    exact_up_to: int = 5000
    rescore_factor: int = 5
    rescore_fraction: float = 0.01


def fuse(
    lexical: Ranking,
    dense: Ranking,
    *,
    items: Sequence[MemoryItem],
    importance: npt.NDArray[np.float64],
    last_used: npt.NDArray[np.float64],
    now: float,
    k: int,
    config: SearchConfig,
    in_span: npt.NDArray[np.bool_] | None = None,
) -> list[SearchHit]:
    """The best `k` hits: the fused score (1 is first in every ranking) plus importance and
    recency (days since last use) boosts, and `date_weight` for the slots of `in_span` (those
    in a period the query names). Ties keep ranking order."""
    if not lexical and not dense:
        return []
    fused = fuse_rankings(lexical, dense, config)
    order, keyword_rank, vector_rank = fused.order, fused.keyword_rank, fused.vector_rank
    keyword_score, similarity, relevance = fused.keyword, fused.similarity, fused.relevance
    keyword_part = fused.keyword_part
    slots = np.array(order, dtype=np.int64)
    boost_importance = config.importance_weight * importance[slots]
    idle_days = np.maximum(0.0, now - last_used[slots]) / 86400
    boost_recency = config.recency_weight * np.exp(-idle_days / config.recency_days)
    scores = relevance + boost_importance + boost_recency
    if in_span is not None:
        scores = scores + config.date_weight * in_span[slots]
    hits = []
    for i in np.argsort(-scores, kind="stable")[:k].tolist():
        slot = order[i]
        hits.append(
            SearchHit(
                item=items[slot],
                score=float(scores[i]),
                keyword_rank=int(keyword_rank[i]) or None,
                keyword_score=keyword_score.get(slot),
                vector_rank=int(vector_rank[i]) or None,
                similarity=similarity.get(slot),
                importance_boost=float(boost_importance[i]),
                recency_boost=float(boost_recency[i]),
                keyword_part=float(keyword_part[i]),
                meaning_part=float(relevance[i] - keyword_part[i]),
            )
        )
    return hits


@dataclass(frozen=True)
class Fusion(Generic[_K]):
    """A keyword and a meaning ranking merged: each key once (keyword hits first), its rank in
    each (1 is first, 0 absent), its scores, and its relevance in 0..1 (of which
    `keyword_part` came from the keyword ranking, the rest from the meaning one)."""

    order: list[_K]
    keyword_rank: npt.NDArray[np.int64]
    vector_rank: npt.NDArray[np.int64]
    keyword: dict[_K, float]
    similarity: dict[_K, float]
    relevance: npt.NDArray[np.float64]
    keyword_part: npt.NDArray[np.float64]


def fuse_rankings(
    lexical: Sequence[tuple[_K, float]], dense: Sequence[tuple[_K, float]], config: SearchConfig
) -> Fusion[_K]:
    """Merge two rankings, each (key, score) best first, and score every key's relevance."""
    order = list(dict.fromkeys([key for key, _ in lexical] + [key for key, _ in dense]))
    row = {key: i for i, key in enumerate(order)}
    keyword_rank = np.zeros(len(order), dtype=np.int64)  # 0: not in that ranking
    vector_rank = np.zeros(len(order), dtype=np.int64)
    keyword_rank[[row[key] for key, _ in lexical]] = np.arange(1, len(lexical) + 1)
    vector_rank[[row[key] for key, _ in dense]] = np.arange(1, len(dense) + 1)
    keyword, similarity = dict(lexical), dict(dense)
    keyword_part, meaning_part = _relevance(
        np.array([keyword.get(key, 0.0) for key in order], dtype=np.float64),
        np.array([similarity.get(key, 0.0) for key in order], dtype=np.float64),
        keyword_rank,
        vector_rank,
        config,
    )
    return Fusion(
        order,
        keyword_rank,
        vector_rank,
        keyword,
        similarity,
        keyword_part + meaning_part,
        keyword_part,
    )


def _relevance(
    keyword: npt.NDArray[np.float64],
    similarity: npt.NDArray[np.float64],
    keyword_rank: npt.NDArray[np.int64],
    vector_rank: npt.NDArray[np.int64],
    config: SearchConfig,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Per candidate, its relevance in 0..1 (1 for the first of every ranking that has any) as
    two parts: from the keyword ranking and from the meaning one.

    `keyword` and `similarity` are the scores (0 where absent), the ranks 0 where absent.
    """
    has_keyword, has_dense = bool(keyword_rank.any()), bool(vector_rank.any())
    if config.fusion == "rrf":
        scale = (config.rrf_k + 1) / max(1, int(has_keyword) + int(has_dense))  # none: empty
        by_words = np.where(keyword_rank > 0, 1 / (config.rrf_k + keyword_rank), 0.0)
        by_meaning = np.where(vector_rank > 0, 1 / (config.rrf_k + vector_rank), 0.0)
        return by_words * scale, by_meaning * scale
    weight = config.dense_weight if has_keyword and has_dense else float(has_dense)
    by_words = np.zeros(len(keyword), dtype=np.float64)
    by_meaning = np.zeros(len(keyword), dtype=np.float64)
    if has_keyword:
        by_words = (1 - weight) * _normalised(keyword, keyword_rank > 0)
    if has_dense:
        by_meaning = weight * _normalised(similarity, vector_rank > 0)
    return by_words, by_meaning


def _normalised(
    scores: npt.NDArray[np.float64], ranked: npt.NDArray[np.bool_]
) -> npt.NDArray[np.float64]:
    """Scores divided by the best, negatives as 0; all ranked ones 1 if none is positive.

    (BM25Okapi scores are all negative when every query word is in most documents.)
    """
    best = float(scores[ranked].max())
    if best <= 0:
        return ranked.astype(np.float64)
    return np.where(ranked, np.maximum(scores, 0.0) / best, 0.0)
