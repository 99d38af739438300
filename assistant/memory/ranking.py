"""Hybrid ranking: reciprocal rank fusion of the keyword and meaning rankings, plus boosts."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from assistant.memory.items import MemoryItem, SearchHit

Ranking = list[tuple[int, float]]  # (slot, score) best first


@dataclass(frozen=True)
class SearchConfig:
    """How search ranks: fusion depth and constant, relevance floor and boosts."""

    depth: int = 50  # how far down each ranking is fused
    rrf_k: int = 60
    min_similarity: float = 0.3  # below this cosine, meaning alone does not make a result
    importance_weight: float = 0.1
    recency_weight: float = 0.05
    recency_days: float = 30.0  # e-folding time of the recency boost


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
) -> list[SearchHit]:
    """The best `k` hits: RRF over both rankings, scaled so that 1 is first in every ranking,
    plus importance and recency (days since last use) boosts. Ties keep ranking order."""
    lists = int(bool(lexical)) + int(bool(dense))
    if not lists:
        return []
    found: dict[int, list[float | None]] = {}  # slot -> keyword rank, BM25, vector rank, cos
    for rank, (slot, score) in enumerate(lexical, start=1):
        found[slot] = [rank, score, None, None]
    for rank, (slot, sim) in enumerate(dense, start=1):
        entry = found.setdefault(slot, [None, None, None, None])
        entry[2], entry[3] = rank, sim
    slots = np.fromiter(found, dtype=np.int64, count=len(found))
    rrf = np.array(
        [sum(1 / (config.rrf_k + r) for r in (e[0], e[2]) if r is not None) for e in found.values()]
    )
    boost_importance = config.importance_weight * importance[slots]
    idle_days = np.maximum(0.0, now - last_used[slots]) / 86400
    boost_recency = config.recency_weight * np.exp(-idle_days / config.recency_days)
    scores = rrf * (config.rrf_k + 1) / lists + boost_importance + boost_recency
    entries = list(found.values())
    hits = []
    for i in np.argsort(-scores, kind="stable")[:k].tolist():
        keyword_rank, keyword_score, vector_rank, similarity = entries[i]
        hits.append(
            SearchHit(
                item=items[int(slots[i])],
                score=float(scores[i]),
                keyword_rank=None if keyword_rank is None else int(keyword_rank),
                keyword_score=keyword_score,
                vector_rank=None if vector_rank is None else int(vector_rank),
                similarity=similarity,
                importance_boost=float(boost_importance[i]),
                recency_boost=float(boost_recency[i]),
            )
        )
    return hits
