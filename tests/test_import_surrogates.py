"""A lone surrogate escaped in a ChatGPT export is reported as invalid text before the first write,
like any other bad character: the streaming parser alone turned a lone high surrogate into "?",
a lone low one into a decoding error of the whole file, and two high ones into another
character. The escapes are kept through the parser whatever the chunk boundaries."""

from __future__ import annotations

import copy
import io
import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from assistant.json_fields import FieldError, check_texts
from assistant.transfer import apply_import, parse_import
from assistant.transfer.stream import Reader, list_items
from assistant.transfer.surrogates import SurrogateGuard
from tests.data import exports
from tests.store_set import StoreSet
from tests.test_transfer import offline_settings, open_stores

# Texts as escaped in a file: (JSON string literal, what Python's json reads).
ESCAPED = [
    (r'"a\ud800b"', "a\ud800b"),  # a lone high surrogate
    (r'"\udc00 z"', "\udc00 z"),  # a lone low one
    (r'"a\ud800\ud800b"', "a\ud800\ud800b"),  # two high ones
    (r'"x\ud83d\ude00y"', "x\U0001f600y"),  # a pair: an emoji
    (r'"\ud83d\ude00\ud83d"', "\U0001f600\ud83d"),  # a pair, then a lone high one
    (r'"\\ud800"', "\\ud800"),  # an escaped backslash: the text "\ud800"
    (r'"\\\ud800"', "\\\ud800"),  # a backslash, then a lone surrogate
    (r'"q\"\ud800"', 'q"\ud800'),
    (r'"\uDBFF\uDFFF end"', "\U0010ffff end"),
    (r'"plain"', "plain"),
]


class Trickle(io.RawIOBase):
    """A stream that gives at most `size` bytes a read."""

    def __init__(self, data: bytes, size: int) -> None:
        self._data = io.BytesIO(data)
        self._size = size

    def read(self, size: int = -1) -> bytes:
        return self._data.read(self._size if size < 0 else min(size, self._size))

    def readable(self) -> bool:
        return True


@pytest.mark.parametrize("size", [1, 2, 3, 5, 6, 7, 11, 12, 13, 64])
def test_escapes_come_through_whatever_the_chunks(size: int) -> None:
    doc = "[" + ", ".join(f'{{"t": {literal}}}' for literal, _ in ESCAPED) + "]"
    items = list(list_items(Reader(Trickle(doc.encode(), size))))
    assert items == json.loads(doc) == [{"t": text} for _, text in ESCAPED]


def test_a_nul_before_hex_digits_is_refused_either_way() -> None:
    (item,) = list(list_items(Reader(io.BytesIO(rb'["\u0000D800"]'))))
    for text in (item, json.loads(r'"\u0000D800"')):
        with pytest.raises(FieldError):
            check_texts(text)


def test_the_guard_rewrites_only_unpaired_ones() -> None:
    guard = SurrogateGuard()
    data = rb'"\ud83d\ude00 \\ud800 \ud800"'
    out = guard.feed(data[:9]) + guard.feed(data[9:]) + guard.feed(b"", final=True)
    assert guard.found == 1
    assert out == rb'"\ud83d\ude00 \\ud800 \u0000D800"'


@pytest.fixture
def stores(data_dir: Path) -> Iterator[StoreSet]:
    offline_settings(data_dir)
    made = open_stores(data_dir)
    yield made
    made.memory.close()


def with_text(conversation: dict[str, Any], title: str, text: str) -> dict[str, Any]:
    spoiled = copy.deepcopy(conversation)
    spoiled["title"] = title
    spoiled["conversation_id"] = spoiled["id"] = f"id-{title}"
    node = next(
        n
        for n in spoiled["mapping"].values()
        if n.get("message") and n["message"]["author"]["role"] == "user"
    )
    node["message"]["content"]["parts"] = [text]
    return spoiled


def test_a_chatgpt_conversation_with_a_lone_surrogate_is_skipped_and_named(
    stores: StoreSet,
) -> None:
    rng = random.Random(5)
    good = [exports.chatgpt_conversation(n, 3, rng) for n in range(2)]
    bad = [
        with_text(good[0], "High", "cut \ud83d here"),
        with_text(good[0], "Low", "cut \udc80 here"),
        with_text(good[0], "Two", "cut \ud83d\ud83d here"),
    ]
    fine = with_text(good[0], "Emoji", "a smile \U0001f600")
    text = json.dumps([good[0], *bad, fine, good[1]])  # escaped, as ensure_ascii writes
    assert "\\ud83d" in text and "\\udc80" in text
    plan = parse_import(text)
    assert {u.name: u.reason for u in plan.unreadable}.keys() == {"High", "Low", "Two"}
    reasons = {u.name: u.reason for u in plan.unreadable}
    assert "holds a lone surrogate (U+D83D)" in reasons["High"]
    assert "holds a lone surrogate (U+DC80)" in reasons["Low"]
    assert "holds a lone surrogate (U+D83D)" in reasons["Two"]
    result = apply_import(plan, stores, "copy")
    assert result.conversations_imported == 3
    texts = [
        m.content
        for info in stores.conversations.all()
        for m in stores.conversations.load(info.id).messages
    ]
    assert "a smile \U0001f600" in texts
    assert not any("?" in t and "here" in t for t in texts)
