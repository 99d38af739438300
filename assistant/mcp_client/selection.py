"""Choosing the MCP tools relevant to a turn, by the memory's hybrid search over tool texts.

Keyword (BM25 over the stemmed words of a tool's name, title and description) and meaning
(the embedder's cosine) rankings are fused by reciprocal rank (`memory.ranking`), so that a
tool named in other words than the user's ("refund" for "money back") is still found.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from assistant.errors import AssistantError
from assistant.mcp_client.status import McpTool
from assistant.memory import Embedder, SearchConfig
from assistant.memory.bm25 import BM25Index
from assistant.memory.ranking import fuse_rankings
from assistant.memory.text import identifier_words, query_terms, terms

log = logging.getLogger(__name__)

_FUSION = SearchConfig(fusion="rrf")


def tool_text(tool: McpTool) -> str:
    """What a tool is searched by: its server, name (words split), title and description."""
    name = " ".join(identifier_words(tool.name))
    return f"{tool.server} {name} {tool.title} {tool.description}"


class ToolIndex:
    """Ranks tools for a query; the tools' vectors are kept while their texts stay the same."""

    def __init__(self, embedder: Embedder | None) -> None:
        self.embedder = embedder
        self._lock = threading.Lock()
        self._vectors: dict[str, npt.NDArray[np.float32]] = {}

    def rank(self, query: str, tools: Sequence[McpTool], k: int) -> list[McpTool]:
        """The `k` tools best for `query`, best first (fewer if fewer match at all)."""
        if not tools or k <= 0:
            return []
        texts = [tool_text(tool) for tool in tools]
        index = BM25Index(k1=_FUSION.bm25_k1, b=_FUSION.bm25_b)
        index.add_many(range(len(tools)), [terms(text) for text in texts])
        tokens, informative = query_terms(query)
        lexical = index.top(tokens, k * 2, require=informative or None) if tokens else []
        dense = self._dense(query, texts, k * 2)
        fused = fuse_rankings(lexical, dense, _FUSION)
        order = np.argsort(-fused.relevance, kind="stable")[:k]
        return [tools[fused.order[i]] for i in order.tolist()]

    def _dense(self, query: str, texts: list[str], k: int) -> list[tuple[int, float]]:
        """The `k` tools nearest the query in meaning (none without an embedder)."""
        if self.embedder is None or not query.strip():
            return []
        try:
            with self._lock:
                missing = [text for text in dict.fromkeys(texts) if text not in self._vectors]
                if missing:
                    for text, row in zip(missing, self.embedder.embed(missing), strict=True):
                        self._vectors[text] = row
                matrix = np.stack([self._vectors[text] for text in texts])
            scores = matrix @ self.embedder.embed([query])[0]
        except AssistantError as exc:  # the embedding server is down: keywords alone
            log.info("Tool search by meaning failed: %s", exc)
            return []
        best = np.argsort(-scores, kind="stable")[:k]
        floor = _FUSION.min_similarity
        return [(int(i), float(scores[i])) for i in best.tolist() if scores[i] >= floor]
