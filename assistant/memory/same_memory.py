"""Whether two memories say the same: the one policy that saving, merging and importing use.

Two statements are the same memory when they have the same word stems in the same order, or
their meanings are close: the cosine of their embeddings, or without embeddings the Jaccard
index of their word sets, at least `MERGE_THRESHOLD`. Called with the store's lock held.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from assistant.memory.items import MemoryItem
from assistant.memory.memory_index import MemoryIndex
from assistant.memory.text import query_terms, terms, tokenize

MERGE_THRESHOLD = 0.85  # a new memory this similar to an active one is merged into it

Vector = npt.NDArray[np.float32]


def similar(
    index: MemoryIndex, text: str, vector: Vector | None, threshold: float, k: int
) -> list[tuple[MemoryItem, float]]:
    """Active items that say nearly the same as `text` (whose embedding is `vector`, if it has
    one), most similar first: by the cosine of the embeddings, or by words if none is close."""
    if vector is not None:
        dense = index.dense_top(vector, k, threshold, index.config)
        if dense:
            return [(index.items[s], sim) for s, sim in dense]
    return similar_by_words(index, text, threshold, k)


def similar_by_words(
    index: MemoryIndex, text: str, threshold: float, k: int
) -> list[tuple[MemoryItem, float]]:
    """Active items whose word sets have a Jaccard index of at least `threshold` with
    `text`'s, most similar first."""
    words = set(tokenize(text))
    query, informative = query_terms(" ".join(words))
    found = []
    for slot, _ in index.keyword_top(query, max(50, k), informative or None):
        jaccard = _jaccard(words, set(tokenize(index.items[slot].text)))
        if jaccard >= threshold:
            found.append((index.items[slot], jaccard))
    found.sort(key=lambda pair: -pair[1])
    return found[:k]


def same_memory(
    index: MemoryIndex,
    item: MemoryItem,
    vector: Vector | None,
    pending: list[tuple[MemoryItem, Vector | None]],
) -> str | None:
    """The id of a memory in `index`, or of an item about to be stored (`pending`), that says
    the same as `item`: the same word stems in the same order (any state but forgotten), or a
    meaning as close as MERGE_THRESHOLD (active ones: by the cosine of unit `vector`s, else by
    the Jaccard index of the word sets); None if none does."""
    norm = terms(item.text)
    query, informative = query_terms(item.text)
    here = [
        index.items[slot]
        for past in (False, True)
        for slot, _ in index.keyword_top(query, 20, informative or None, past=past)
    ]
    for other in [i for i, _ in pending] + here:
        if terms(other.text) == norm:
            return other.id
    active = [(i, v) for i, v in pending if i.state == "active"]
    if vector is not None:
        for other, other_vector in active:
            if other_vector is not None and float(other_vector @ vector) >= MERGE_THRESHOLD:
                return other.id
        dense = index.dense_top(vector, 1, MERGE_THRESHOLD, index.config)
        return index.items[dense[0][0]].id if dense else None
    words = set(tokenize(item.text))
    for other, _ in active:
        if _jaccard(words, set(tokenize(other.text))) >= MERGE_THRESHOLD:
            return other.id
    found = similar_by_words(index, item.text, MERGE_THRESHOLD, 1)
    return found[0][0].id if found else None


def unit_rows(matrix: Vector) -> Vector:
    """`matrix` with each row scaled to length 1 (zero rows stay zero)."""
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return np.asarray(matrix / np.where(norms > 0, norms, 1.0), dtype=np.float32)


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 1.0
