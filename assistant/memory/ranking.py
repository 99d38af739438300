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
    """How search ranks: fusion depth and constant, relevance floor, boosts, dense search."""

    depth: int = 50  # how far down each ranking is fused
    rrf_k: int = 60
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
) -> list[SearchHit]:
    """The best `k` hits: RRF over both rankings, scaled so that 1 is first in every ranking,
    plus importance and recency (days since last use) boosts. Ties keep ranking order."""
    lists = int(bool(lexical)) + int(bool(dense))
    if not lists:
        return []
    order = list(dict.fromkeys([slot for slot, _ in lexical] + [slot for slot, _ in dense]))
    row = {slot: i for i, slot in enumerate(order)}
    slots = np.array(order, dtype=np.int64)
    keyword_rank = np.zeros(len(order), dtype=np.int64)  # 0: not in that ranking
    vector_rank = np.zeros(len(order), dtype=np.int64)
    keyword_rank[[row[s] for s, _ in lexical]] = np.arange(1, len(lexical) + 1)
    vector_rank[[row[s] for s, _ in dense]] = np.arange(1, len(dense) + 1)
    keyword_score = dict(lexical)
    similarity = dict(dense)
    rrf = np.where(keyword_rank > 0, 1 / (config.rrf_k + keyword_rank), 0.0) + np.where(
        vector_rank > 0, 1 / (config.rrf_k + vector_rank), 0.0
    )
    boost_importance = config.importance_weight * importance[slots]
    idle_days = np.maximum(0.0, now - last_used[slots]) / 86400
    boost_recency = config.recency_weight * np.exp(-idle_days / config.recency_days)
    scores = rrf * (config.rrf_k + 1) / lists + boost_importance + boost_recency
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
            )
        )
    return hits
