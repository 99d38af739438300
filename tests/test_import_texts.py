"""Every text of an import is checked before the first write: a lone surrogate or a control
character anywhere (values and keys, at any depth) is named with its field and changes nothing."""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from assistant.cli import main
from assistant.errors import InvalidImportError
from assistant.transfer import apply_import, parse_import
from tests.data import exports
from tests.store_set import StoreSet
from tests.test_transfer import _valid_doc, offline_settings, open_stores, snapshot

BAD = ["\ud800", "\udfff", "\x00", "\x07", "\x1b", "\x7f"]
CHARACTER = {c: "lone surrogate" if c > "\ud000" else "control character" for c in BAD}


def string_paths(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """The path of every string value in `value`."""
    if isinstance(value, str):
        yield path
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from string_paths(item, (*path, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from string_paths(item, (*path, i))


def spoiled(doc: dict[str, Any], path: tuple[Any, ...], bad: str) -> dict[str, Any]:
    doc = copy.deepcopy(doc)
    node = doc
    for key in path[:-1]:
        node = node[key]
    text = node[path[-1]]
    node[path[-1]] = text[: len(text) // 2] + bad + text[len(text) // 2 :]
    return doc


def dotted(path: tuple[Any, ...]) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".")


@pytest.fixture
def populated(data_dir: Path) -> Iterator[StoreSet]:
    offline_settings(data_dir)
    stores = open_stores(data_dir)
    apply_import(parse_import(json.dumps(_valid_doc())), stores, "skip")
    yield stores
    stores.memory.close()


def test_a_bad_character_in_any_text_is_named_and_changes_nothing(
    populated: StoreSet, data_dir: Path
) -> None:
    doc = _valid_doc()
    doc["conversations"][0]["id"] = "c9"  # new, so that an import would write
    doc["conversations"][1]["id"] = "c8"
    paths = list(string_paths(doc))
    assert len(paths) > 30
    before = snapshot(data_dir)
    for n, path in enumerate(paths):
        bad = BAD[n % len(BAD)]
        with pytest.raises(InvalidImportError) as caught:
            plan = parse_import(json.dumps(spoiled(doc, path, bad)))
            apply_import(plan, populated, "copy")  # on failure: must not get this far
        message = str(caught.value)
        if path[-1] in ("content", "text", "title", "summary", "arguments", "name", "version"):
            # Free text (elsewhere a check of ids or times may be the one that refuses)
            expected = f"is wrong: it holds a {CHARACTER[bad]} (U+{ord(bad):04X})"
            assert message.startswith("conversations.json can't be imported: "), message
            assert expected in message and dotted(path) in message, (path, message)
        assert snapshot(data_dir) == before


def test_a_bad_character_in_a_key_is_named(populated: StoreSet) -> None:
    doc = _valid_doc()
    doc["app"]["na\ud83dme"] = "x"
    with pytest.raises(
        InvalidImportError, match=r"the “app” field is wrong: it holds a lone surrogate \(U\+D83D\)"
    ):
        parse_import(json.dumps(doc))


def test_tabs_and_new_lines_and_pairs_are_fine(populated: StoreSet) -> None:
    doc = _valid_doc()
    doc["conversations"][0]["messages"][0]["content"] = "a\tb\r\nc \U0001f600 \u2028 é"
    assert json.dumps(doc, ensure_ascii=True).count("\\ud83d") == 1  # a pair, written escaped
    plan = parse_import(json.dumps(doc))
    assert len(plan.conversations) == 2


def test_the_cli_refuses_a_surrogate_in_one_sentence(
    populated: StoreSet, data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = spoiled(_valid_doc(), ("memories", 0, "text"), "\udc80")
    bad = data_dir.parent / "bad.json"
    bad.write_text(json.dumps(doc), encoding="utf-8")
    populated.memory.close()
    before = snapshot(data_dir)
    assert main(["import", str(bad), "--on-conflict", "copy"]) == 1
    err = capsys.readouterr().err
    assert (
        "the “text” of memory 1 (“Like\ufffds tea”) is wrong: it holds a lone surrogate (U+DC80)"
        in err
    )
    assert "(at memories[0].text)" in err
    assert "Traceback" not in err and "codec" not in err
    assert snapshot(data_dir) == before


def test_a_chatgpt_conversation_with_a_control_character_is_skipped_and_named(
    populated: StoreSet, data_dir: Path
) -> None:
    rng = random.Random(4)
    good = [exports.chatgpt_conversation(n, 3, rng) for n in range(3)]
    bad = copy.deepcopy(good[1])
    bad["title"] = "Broken"
    bad["conversation_id"] = bad["id"] = "broken-1"
    node = next(n for n in bad["mapping"].values() if n.get("message"))
    node["message"]["content"]["parts"] = ["cut \x00 here"]
    plan = parse_import(json.dumps([good[0], bad, good[2]]))
    assert [u.name for u in plan.unreadable] == ["Broken"]
    assert "control character (U+0000)" in plan.unreadable[0].reason
    result = apply_import(plan, populated, "copy")
    assert result.conversations_imported == 2
