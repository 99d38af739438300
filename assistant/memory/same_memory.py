"""Whether two memories say the same: the one policy of saving (`SemanticMemory.save`
merges into that memory), importing (`insert` maps the item to it) and the curator's fallback
(nothing to learn).

A statement is the same memory as another when they have the same word stems in the same order,
or when their meanings are close: the cosine of their embeddings, or the Jaccard index of their
word sets, at least `MERGE_THRESHOLD`. Called with the store's lock held.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from assistant.memory.items import MemoryItem
from assistant.memory.memory_index import Mask, MemoryIndex
from assistant.memory.text import query_terms, terms, tokenize

MERGE_THRESHOLD = 0.85  # a new memory this similar to an active one is merged into it

Vector = npt.NDArray[np.float32]


def similar(
    index: MemoryIndex,
    text: str,
    vector: Vector | None,
    threshold: float,
    k: int,
    *,
    allowed: Mask | None = None,
) -> list[tuple[MemoryItem, float]]:
    """Active items (among the `allowed` slots) that say nearly the same as `text` (whose
    embedding is `vector`, if it has one), most similar first: by the cosine of the
    embeddings, or by words if none is close."""
    if vector is not None:
        dense = index.dense_top(vector, k, threshold, index.config, index.active_mask(allowed))
        if dense:
            return [(index.items[s], sim) for s, sim in dense]
    return similar_by_words(index, text, threshold, k, allowed)


def similar_by_words(
    index: MemoryIndex, text: str, threshold: float, k: int, allowed: Mask | None = None
) -> list[tuple[MemoryItem, float]]:
    """Active items (among the `allowed` slots) whose word sets have a Jaccard index of at
    least `threshold` with `text`'s, most similar first."""
    words = set(tokenize(text))
    query, informative = query_terms(" ".join(words))
    found = []
    for slot, _ in index.keyword_top(query, max(50, k), informative or None, allowed=allowed):
        jaccard = _jaccard(words, set(tokenize(index.items[slot].text)))
        if jaccard >= threshold:
            found.append((index.items[slot], jaccard))
    found.sort(key=lambda pair: -pair[1])
    return found[:k]


def same_memory(
    index: MemoryIndex,
    text: str,
    vector: Vector | None,
    pending: Sequence[tuple[MemoryItem, Vector | None]] = (),
    *,
    archived: bool = False,
    allowed: Mask | None = None,
) -> MemoryItem | None:
    """The memory in `index`, or the item about to be stored (`pending`, with their unit
    vectors), that says the same as `text` (whose unit vector is `vector`, if it has one): the
    same word stems in the same order (active ones, archived ones too with `archived`), else a
    meaning as close as MERGE_THRESHOLD among the active ones: by the cosine of the vectors,
    else by the Jaccard index of the word sets; in `index`, among the `allowed` slots only (a
    scope's). None if none does."""
    norm = terms(text)
    query, informative = query_terms(text)
    here = [
        index.items[slot]
        for past in ((False, True) if archived else (False,))
        for slot, _ in index.keyword_top(query, 20, informative or None, past=past, allowed=allowed)
    ]
    for other in [i for i, _ in pending] + here:
        if terms(other.text) == norm:
            return other
    active = [(i, v) for i, v in pending if i.state == "active"]
    if vector is not None:
        for other, other_vector in active:
            if other_vector is not None and float(other_vector @ vector) >= MERGE_THRESHOLD:
                return other
        mask = index.active_mask(allowed)
        dense = index.dense_top(vector, 1, MERGE_THRESHOLD, index.config, mask)
        if dense:
            return index.items[dense[0][0]]
    words = set(tokenize(text))
    for other, _ in active:
        if _jaccard(words, set(tokenize(other.text))) >= MERGE_THRESHOLD:
            return other
    found = similar_by_words(index, text, MERGE_THRESHOLD, 1, allowed)
    return found[0][0] if found else None


def unit_rows(matrix: Vector) -> Vector:
    """`matrix` with each row scaled to length 1 (zero rows stay zero)."""
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return np.asarray(matrix / np.where(norms > 0, norms, 1.0), dtype=np.float32)


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 1.0
