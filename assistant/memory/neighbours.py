"""A message's neighbours as evidence: the better relevance of the messages just before and
after it in its conversation.

In a conversation the answer sits next to what asked for it: "Where did you go?" is answered by
"Lisbon, last week", which shares no word with a question about the trip, while the message
before it does (and the other way round: a reply that matches the query points at the message
it answers). Search adds `SearchConfig.neighbour_weight` times a candidate's neighbour relevance
to its own, as passage retrieval smooths a passage's score with the passages around it, so the
matched message and its neighbour both rise. Only the keyword and meaning relevance passes to a
neighbour (not the boosts for a named period or a summary, which neighbours share anyway), and
only between candidates: a message outside both rankings has no relevance to pass. And only
what the message itself says: a message found also by its keys (the memories extracted from it)
passes on the relevance of its own words and meaning (`keyless_relevance`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt

from assistant.memory.ranking import Fusion, SearchConfig, fuse_rankings


def neighbour_relevance(
    order: Sequence[int], relevance: npt.NDArray[np.float64], prev: Mapping[int, int]
) -> npt.NDArray[np.float64]:
    """Per candidate of `order` (message keys, `relevance` each), the best relevance among the
    candidates just before and just after it (`prev`: key -> key of the message before it in
    its conversation); 0 where neither is a candidate."""
    place = {key: i for i, key in enumerate(order)}
    out = np.zeros(len(order), dtype=np.float64)
    for i, key in enumerate(order):
        j = place.get(prev.get(key, -1))
        if j is not None:  # key follows order[j]: each is the other's neighbour
            out[i] = max(out[i], relevance[j])
            out[j] = max(out[j], relevance[i])
    return out


def keyless_relevance(
    fused: Fusion[int],
    keyed: Sequence[int],
    keyword: Sequence[float | None],
    similarity: Sequence[float],
    config: SearchConfig,
) -> npt.NDArray[np.float64]:
    """The relevance of `fused`'s candidates without what their keys add (see `message_keys`),
    fused again as the search fuses: for each candidate of `keyed` (those that have keys), its
    keyword score without the keys (None: it would not qualify) and its own meaning score. A
    key says what its message meant, not what its neighbours did: passed on, the fact extracted
    from an answer made its question and the next message rise too."""
    words = dict(zip(keyed, keyword, strict=True))
    meaning = dict(zip(keyed, similarity, strict=True))
    lexical = [(key, words.get(key, score)) for key, score in fused.keyword.items()]
    dense = [
        (key, meaning.get(key, score))
        for key, score in fused.similarity.items()
        if meaning.get(key, score) >= config.min_similarity
    ]
    kept = [(key, score) for key, score in lexical if score is not None]
    again = fuse_rankings(
        sorted(kept, key=lambda pair: -pair[1]), sorted(dense, key=lambda pair: -pair[1]), config
    )
    relevance = dict(zip(again.order, again.relevance.tolist(), strict=True))
    return np.array([relevance.get(key, 0.0) for key in fused.order], dtype=np.float64)
