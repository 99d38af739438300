"""A derived cache of the conversation search index, so that opening does not read every file.

Building the index means reading, tokenizing and indexing every conversation: about ten seconds
at 100,000 messages. At close, a store whose index changed writes `conversations/index.npz`:
for each indexed conversation the size and modification time of the file the index holds it
from; the indexed messages (key, conversation, id, text, time, the message before); the texts
they were also found by (`message_keys`); the conversations' summaries; and the BM25 index as
flat arrays. Strings are kept
as one UTF-8 blob each with their offsets. A store that opens it keeps a conversation's part
only if its file still has that size and time, and reads the others again; a cache of another
version, or unreadable, is ignored. Written atomically; it holds what the conversation files
and the memories hold (and a forgotten memory's text leaves it at the next close).
"""

from __future__ import annotations

import json
import logging
import zipfile
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from assistant.fileio import atomic_write_with
from assistant.memory.bm25 import Snapshot
from assistant.memory.message_vectors import MessageKey

log = logging.getLogger(__name__)

CACHE_VERSION = 2  # 2: conversation summaries
CACHE_NAME = "index.npz"
IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True)
class IndexState:
    """What a message index holds, and of which files."""

    files: dict[str, tuple[int, int]]  # conversation -> (size, mtime_ns) of its file then
    order: dict[str, list[int]]  # conversation -> the keys of its messages, in order
    keys: IntArray  # per message
    conversations: list[str]
    messages: list[str]
    texts: list[str]
    times: list[str]
    prev: IntArray  # per message: the key of the message before it, or -1
    key_texts: dict[MessageKey, tuple[str, ...]]  # the keys its documents were indexed with
    summaries: dict[str, str]  # conversation -> its summary, if it has one
    bm25: Snapshot
    next_key: int
    flavour: str  # what the keyword documents hold (`MessageIndex`'s settings)


def save(directory: Path, state: IndexState) -> None:
    """Write the cache atomically; a failure is logged (the index is built again next time)."""
    meta = {
        "version": CACHE_VERSION,
        "files": state.files,
        "order": state.order,
        "next_key": state.next_key,
        "flavour": state.flavour,
        "key_texts": [[c, m, list(t)] for (c, m), t in state.key_texts.items()],
        "summaries": state.summaries,
    }
    arrays: dict[str, npt.NDArray[Any]] = {
        "meta": np.frombuffer(json.dumps(meta).encode("utf-8"), dtype=np.uint8),
        "keys": state.keys,
        "prev": state.prev,
        **state.bm25.columns(),
    }
    for name in ("conversations", "messages", "texts", "times"):
        arrays[name], arrays[f"{name}_ends"] = _pack(getattr(state, name))
    arrays["terms"], arrays["terms_ends"] = _pack(state.bm25.terms)
    try:
        atomic_write_with(directory / CACHE_NAME, lambda f: np.savez(f, **arrays))  # type: ignore[arg-type]
    except OSError as exc:
        log.warning("Could not save the conversation search index: %s", exc)


def load(directory: Path) -> IndexState | None:
    """The cached index, or None if there is none usable."""
    path = directory / CACHE_NAME
    try:
        with np.load(path, allow_pickle=False) as data:
            meta = json.loads(data["meta"].tobytes().decode("utf-8"))
            if meta.get("version") != CACHE_VERSION:
                return None
            strings = {
                name: _unpack(data[name], data[f"{name}_ends"])
                for name in ("conversations", "messages", "texts", "times", "terms")
            }
            bm25 = Snapshot.from_columns(strings["terms"], data)
            keys, prev = data["keys"], data["prev"]
        state = IndexState(
            files={cid: (int(s), int(t)) for cid, (s, t) in meta["files"].items()},
            order={cid: [int(k) for k in ks] for cid, ks in meta["order"].items()},
            keys=keys,
            conversations=strings["conversations"],
            messages=strings["messages"],
            texts=strings["texts"],
            times=strings["times"],
            prev=prev,
            key_texts={(c, m): tuple(t) for c, m, t in meta["key_texts"]},
            summaries={str(c): str(t) for c, t in meta["summaries"].items()},
            bm25=bm25,
            next_key=int(meta["next_key"]),
            flavour=str(meta["flavour"]),
        )
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError, zipfile.BadZipFile) as exc:
        log.warning("Ignoring the conversation search index cache (%s): reading the files", exc)
        return None
    n = len(state.keys)
    sizes = {len(state.prev), len(state.conversations), len(state.messages), len(state.texts)}
    if sizes | {len(state.times)} != {n}:
        log.warning("Ignoring the conversation search index cache: its columns differ in length")
        return None
    return state


def _pack(strings: list[str]) -> tuple[npt.NDArray[np.uint8], IntArray]:
    """The strings as one UTF-8 blob and the end of each (in characters)."""
    joined = "".join(strings)
    ends = np.cumsum(np.fromiter(map(len, strings), dtype=np.int64, count=len(strings)))
    return np.frombuffer(joined.encode("utf-8"), dtype=np.uint8), ends.astype(np.int64)


def _unpack(blob: npt.NDArray[np.uint8], ends: IntArray) -> list[str]:
    joined = blob.tobytes().decode("utf-8")
    bounds = [0, *ends.tolist()]
    if bounds[-1] != len(joined):
        raise ValueError("string ends do not match the blob")
    return [joined[a:b] for a, b in pairwise(bounds)]
