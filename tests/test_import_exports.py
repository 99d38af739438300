"""Importing other apps' exports as they arrive: ChatGPT's zip (classic and sharded), its folder,
one shard, Claude's export; bad conversations skipped and named; bad files change nothing."""

from __future__ import annotations

import copy
import io
import json
import shutil
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assistant.cli import _ProgressLine, main
from assistant.credentials import Credentials
from assistant.errors import InvalidImportError
from assistant.memory import ConversationStore
from assistant.transfer import (
    ImportCancelledError,
    ImportedConversation,
    apply_import,
    find_source,
    load_import,
    parse_import,
    read_conversations,
)
from assistant.transfer.sources import ImportSource, Member
from tests.data import exports
from tests.store_set import StoreSet
from tests.test_transfer import offline_settings, open_stores, snapshot

DATA = exports.HERE


@pytest.fixture
def target(tmp_path: Path) -> Iterator[StoreSet]:
    stores = open_stores(tmp_path / "target")
    yield stores
    stores.memory.close()


def read_all(path: Path) -> list[ImportedConversation]:
    return list(read_conversations(load_import(path)))


def by_title(conversations: list[ImportedConversation]) -> dict[str, list[tuple[str, str]]]:
    return {c.title: [(m.role, m.content) for m in c.messages] for c in conversations}


def _members(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {info.filename: archive.read(info) for info in archive.infolist()}


def test_the_fixtures_are_what_the_script_writes() -> None:
    names = set()
    for name, data in exports.fixtures():
        names.add(name)
        stored = (DATA / name).read_bytes()
        if name.endswith(".zip"):  # another zlib may deflate differently: compare the content
            assert _members(stored) == _members(data), f"run python -m tests.data.exports ({name})"
        else:
            assert stored == data, f"run python -m tests.data.exports ({name})"
    assert {p.name for p in DATA.iterdir()} == names


# -- what is kept --------------------------------------------------------------------------------


def test_every_visible_turn_of_a_realistic_export_survives() -> None:
    plan = load_import(DATA / "chatgpt-realistic.json")
    assert (plan.format_name, len(plan.conversations), plan.message_count) == (
        "ChatGPT export",
        7,
        19,
    )
    assert plan.unreadable == ()
    conversations = read_all(DATA / "chatgpt-realistic.json")
    shown = by_title(conversations)
    # The edited prompt's branch (current_node), without custom instructions, thoughts or tools;
    # the entity marker is its name, the citation links to the sources the metadata lists.
    assert shown["Lisbon trip"] == [
        ("user", "Best time to visit Lisbon in 2026?"),
        (
            "assistant",
            "April to June, when Porto and Lisbon are mild ([Visit Lisboa]"
            "(https://www.visitlisboa.com/), [Lisbon weather](https://example.org/weather)).",
        ),
    ]
    assert shown["Boiling eggs"] == [
        ("user", "Remind me how long to boil an egg."),
        ("assistant", "About nine minutes for a hard-boiled egg."),
    ]
    assert shown["Robin"] == [
        ("user", "[image: robin.jpg]"),
        ("assistant", "That is a European robin."),
        ("user", "Summarise this report and draw a robin.\n[attachment: report.pdf]"),
        ("assistant", "[image]"),
        ("assistant", "The report says birds sing at dawn."),
    ]
    assert shown["Haiku canvas"][1] == ("assistant", "[canvas: Haiku]\n\nOld pond\nfrog leaps in")
    assert shown["Hello world"] == [
        ("user", "Show me hello world in Python."),
        ("assistant", '```python\nprint("hello")\n```'),
    ]
    for conversation in conversations:
        for message in conversation.messages:
            assert not any("\ue200" <= ch <= "\ue203" for ch in message.content)
            assert "{'" not in message.content and "content_type" not in message.content
    assert "Left out as they cannot be shown as text: canvas edits (1), error notices (1)." in (
        plan.notes
    )


def test_times_never_become_the_import_time() -> None:
    conversations = {c.title: c for c in read_all(DATA / "chatgpt-realistic.json")}
    undated = conversations["ChatGPT conversation"]
    assert undated.created_at.startswith("1970-01-01T00:00:")  # shown as "date unknown"
    assert {m.created_at for m in undated.messages} == {undated.created_at}
    lisbon = conversations["Lisbon trip"]
    assert (lisbon.created_at, lisbon.updated_at) == (
        "2026-01-01T00:00:00.000000Z",
        "2026-01-01T00:01:04.000000Z",
    )


def test_do_not_remember_is_kept_in_the_store(target: StoreSet) -> None:
    plan = load_import(DATA / "chatgpt-realistic.json")
    assert any("not to be remembered" in note for note in plan.notes)
    apply_import(plan, target, "skip")
    private = exports.cid(6)
    assert target.conversations.load(private).do_not_remember
    assert not target.conversations.load(exports.cid(1)).do_not_remember
    listing = {c.id: c for c in target.conversations.all()}
    assert listing[private].do_not_remember and not listing[private].temporary
    # A fresh store reads the flag from the file, not only from the cached listing.
    fresh = ConversationStore(target.conversations.directory.parent)
    fresh.directory.joinpath("index.json").unlink(missing_ok=True)
    assert {c.id for c in fresh.all() if c.do_not_remember} == {private}


def test_custom_instructions_are_offered_and_kept_only_when_chosen(target: StoreSet) -> None:
    plan = load_import(DATA / "chatgpt-realistic.json")
    texts = [(s.text, s.kind) for s in plan.suggested_memories]
    assert texts == [
        ("I live in Porto and work as a nurse on night shifts.", "fact"),
        ("Answer briefly, in British English.", "preference"),
    ]
    apply_import(plan, target, "skip")
    assert len(target.memory) == 0
    result = apply_import(plan, target, "skip", suggestions=plan.suggested_memories[:1])
    (item,) = target.memory.all(None)
    assert item.text.startswith("I live in Porto") and item.tags == ("Imported from ChatGPT",)
    assert result.memories_imported == 1


# -- as delivered --------------------------------------------------------------------------------


def _same_as_realistic(path: Path) -> None:
    assert by_title(read_all(path)) == by_title(read_all(DATA / "chatgpt-realistic.json"))


def test_the_classic_zip_imports() -> None:
    source = find_source(DATA / "chatgpt-classic.zip")
    assert [m.name for m in source.members] == ["conversations.json"]
    _same_as_realistic(DATA / "chatgpt-classic.zip")


def test_the_sharded_zip_imports_every_shard_in_order() -> None:
    source = find_source(DATA / "chatgpt-sharded.zip")
    assert [m.name for m in source.members] == [
        "conversations-000.json",
        "conversations-001.json",
        "conversations-002.json",
    ]
    plan = load_import(DATA / "chatgpt-sharded.zip")
    assert (len(plan.conversations), plan.message_count) == (7, 19)  # the preview sums shards
    _same_as_realistic(DATA / "chatgpt-sharded.zip")


def test_the_unpacked_folder_and_its_manifest_import(tmp_path: Path) -> None:
    folder = tmp_path / "export"
    with zipfile.ZipFile(DATA / "chatgpt-sharded.zip") as archive:
        archive.extractall(folder)
    _same_as_realistic(folder)
    _same_as_realistic(folder / "export_manifest.json")  # picking a companion means the export
    nested = tmp_path / "outer"
    shutil.copytree(folder, nested / "chatgpt-export")
    _same_as_realistic(nested)  # one folder down


def test_one_shard_imports_alone() -> None:
    titles = [c.title for c in read_all(DATA / "chatgpt-shard-001.json")]
    assert titles == ["Haiku canvas", "Hello world", "Private"]


def test_the_same_id_in_two_shards_is_named(tmp_path: Path) -> None:
    real = exports.realistic()
    archive = tmp_path / "export.zip"
    archive.write_bytes(
        exports.zip_bytes(
            {
                "conversations-000.json": json.dumps(real[:2]).encode(),
                "conversations-001.json": json.dumps(real[1:3]).encode(),
            }
        )
    )
    plan = load_import(archive)
    assert [c.title for c in plan.conversations] == ["Lisbon trip", "Boiling eggs", "Robin"]
    (twice,) = plan.unreadable
    assert twice.name == "Boiling eggs" and "used by an earlier conversation" in twice.reason


def test_claude_exports_import_the_same_way() -> None:
    for name in ("claude-conversations.json", "claude-export.zip"):
        plan = load_import(DATA / name)
        assert plan.format_name == "Claude export"
        shown = by_title(read_all(DATA / name))
        assert shown["Tomato sauce"] == [
            (
                "user",
                "How long should tomato sauce simmer?\n\n[attachment: recipe.txt]\n"
                "Nonna's recipe: simmer for 45 minutes.",
            ),
            (
                "assistant",
                "Your recipe says 45 minutes; 30 to 60 is usual.\n\n[artifact: Timer plan]\n\n"
                "0:00 start\n0:45 done",
            ),
        ]
        assert shown["Claude conversation"][0] == (
            "user",
            "Plain text only\n\n[attachment: photo.png]",
        )


# -- robustness ----------------------------------------------------------------------------------


def test_bad_conversations_are_skipped_and_named(target: StoreSet) -> None:
    plan = load_import(DATA / "chatgpt-bad-entries.json")
    assert [c.title for c in plan.conversations] == ["Boiling eggs", "Robin"]
    reasons = {u.name: u.reason for u in plan.unreadable}
    assert reasons == {
        "Lost mapping": (
            "is neither a ChatGPT conversation (it has no “mapping”) nor a Claude one "
            "(no “chat_messages”)"
        ),
        "Null author": (
            "the “message.author” of message “h-u1” is wrong: it must be a group of named "
            "fields, not null (at mapping.h-u1.message.author)"
        ),
        "Cycle": (
            "the “parent” of message “i-2” is wrong: the parent links form a cycle "
            "(at mapping.i-2.parent)"
        ),
        "Dangling": (
            "the “parent” of message “j-1” is wrong: 'ghost' is not a message of this "
            "conversation (at mapping.j-1.parent)"
        ),
    }
    note = plan.unreadable_note()
    assert note is not None and note.startswith("4 conversations could not be read")
    assert note.endswith("and 1 more.")
    result = apply_import(plan, target, "skip")
    assert result.conversations_imported == 2


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        (
            "chatgpt-empty.json",
            "chatgpt-empty.json holds no conversations to import. Its list of conversations is "
            "empty: choose another export, or export again.",
        ),
        (
            "chatgpt-truncated.json",
            "chatgpt-truncated.json is not valid JSON: it ends too early (the file may be cut "
            "short)",
        ),
        ("chatgpt-not-utf8.json", "chatgpt-not-utf8.json is not valid JSON: it is not UTF-8 text"),
        (
            "zip-bomb.zip",
            "zip-bomb.zip is not imported: its conversations.json would grow 1,028 times when "
            "unpacked, far more than any export does, so it looks like a zip bomb.",
        ),
        (
            "zip-traversal.zip",
            "zip-traversal.zip holds no conversations to import: a ChatGPT or Claude export zip "
            "has a conversations.json",
        ),
    ],
)
def test_a_bad_file_changes_nothing(
    data_dir: Path, capsys: pytest.CaptureFixture[str], name: str, expected: str
) -> None:
    offline_settings(data_dir)
    before = snapshot(data_dir)
    with pytest.raises(InvalidImportError) as exc:
        load_import(DATA / name)
    assert expected in str(exc.value)
    assert main(["import", str(DATA / name)]) == 1
    err = capsys.readouterr().err
    assert expected in err and "Traceback" not in err and "at at" not in err
    assert snapshot(data_dir) == before


def test_an_empty_export_writes_nothing_at_all(tmp_path: Path) -> None:
    root = tmp_path / "fresh"
    assert main(["--data-dir", str(root), "import", str(DATA / "chatgpt-empty.json")]) == 1
    assert not root.exists() or snapshot(root) == {}


def test_a_large_member_that_deflates_normally_is_not_a_bomb(tmp_path: Path) -> None:
    rng = exports.random.Random(1)
    real = [exports.chatgpt_conversation(n, 30, rng) for n in range(40)]
    archive = tmp_path / "big.zip"
    archive.write_bytes(exports.zip_bytes(exports.classic(real)))
    (member,) = find_source(archive).members
    assert member.size > 1 << 20
    assert len(load_import(archive).conversations) == 40


def test_nesting_is_bounded_but_brackets_in_text_are_not_nesting() -> None:
    with pytest.raises(InvalidImportError, match="nested more than 512 levels"):
        parse_import(b'[{"mapping": {}, "x": ' + b"[" * 600 + b"]" * 600 + b"}]")
    text = '\\"[{' * 2000 + "[" * 70_000  # brackets, escaped quotes, over chunk boundaries
    doc = json.dumps([{**exports.realistic()[1], "title": text}])
    assert len(parse_import(doc).conversations) == 1


# -- progress and cancelling -------------------------------------------------------------------


def test_progress_counts_bytes_up_to_the_total() -> None:
    steps: list[tuple[int, int]] = []
    load_import(DATA / "chatgpt-sharded.zip", lambda done, total: steps.append((done, total)))
    total = find_source(DATA / "chatgpt-sharded.zip").size
    assert steps[-1] == (total, total)
    assert [d for d, _ in steps] == sorted(d for d, _ in steps)


def test_cancelling_stops_the_read_and_the_import(target: StoreSet) -> None:
    with pytest.raises(ImportCancelledError):
        load_import(DATA / "chatgpt-realistic.json", cancel=lambda: True)
    plan = load_import(DATA / "chatgpt-realistic.json")
    imported: list[int] = []

    def cancel_after_two() -> bool:
        return len(target.conversations.all()) >= 2

    with pytest.raises(ImportCancelledError):
        apply_import(
            plan, target, "skip", lambda done, _: imported.append(done), cancel=cancel_after_two
        )
    assert len(target.conversations.all()) == 2  # what was imported stays


def test_the_command_line_reports_what_was_left_out(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    offline_settings(data_dir)
    assert main(["import", str(DATA / "chatgpt-bad-entries.json")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "Imported 2 conversations and 0 memories"
    assert out[1].startswith("4 conversations could not be read: ")
    assert main(["import", str(DATA / "chatgpt-sharded.zip")]) == 0
    out = capsys.readouterr().out
    assert "Imported 5 conversations (2 skipped as already present) and 0 memories" in out
    assert "custom instructions (2)" in out


def test_the_progress_line_redraws_in_place() -> None:
    stream = io.StringIO()
    line = _ProgressLine(stream)
    line.bytes(1_000_000, 3_000_000)
    line.bytes(1_000_000, 3_000_000)  # unchanged: not drawn again
    line.steps(5, 7)
    line.done()
    assert stream.getvalue() == ("\rReading 1 of 3 MB\x1b[K\rImporting 5 of 7\x1b[K\r\x1b[K")


def test_a_data_source_reads_like_a_file() -> None:
    source = ImportSource.of_data(b"[]")
    assert source.members == (Member("conversations.json", 2),)
    with source.open(source.members[0]) as stream:
        assert stream.read() == b"[]"


def test_export_and_a_chatgpt_import_never_touch_the_keyring(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def touched(self: Credentials) -> str | None:
        raise AssertionError("the keyring was read")

    monkeypatch.setattr(Credentials, "api_key", touched)
    assert main(["import", str(DATA / "chatgpt-classic.zip")]) == 0
    assert main(["export", str(tmp_path / "out.json")]) == 0
    assert len(json.loads((tmp_path / "out.json").read_text())["conversations"]) == 7


def test_importing_again_skips_without_reading_the_export_again(
    tmp_path: Path, target: StoreSet
) -> None:
    copy = tmp_path / "conversations.json"
    shutil.copy(DATA / "chatgpt-realistic.json", copy)
    apply_import(load_import(copy), target, "skip")
    again = load_import(copy)
    copy.unlink()  # everything is here already: the file is not needed
    result = apply_import(again, target, "skip")
    assert (result.conversations_imported, result.conversations_skipped) == (0, 7)


def test_a_zip_with_a_top_folder_imports(tmp_path: Path) -> None:
    files = exports.sharded(exports.realistic(), 4)
    archive = tmp_path / "export.zip"
    archive.write_bytes(exports.zip_bytes({f"chatgpt-export/{k}": v for k, v in files.items()}))
    assert [m.name for m in find_source(archive).members] == [
        "chatgpt-export/conversations-000.json",
        "chatgpt-export/conversations-001.json",
    ]
    _same_as_realistic(archive)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield (*prefix, key)
            yield from _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield (*prefix, index)
            yield from _paths(item, (*prefix, index))


_REALISTIC = exports.realistic() + exports.claude()
_PATHS = list(_paths(_REALISTIC))


@settings(derandomize=True, max_examples=150, deadline=None)
@given(
    where=st.sampled_from(_PATHS),
    value=st.sampled_from([None, 0, -1, 1e300, "", "x", [], {}, True, [None], {"x": None}]),
)
def test_any_damaged_field_is_a_clear_error_or_a_skipped_conversation(
    where: tuple[Any, ...], value: Any
) -> None:
    doc = copy.deepcopy(_REALISTIC)
    node = doc
    for key in where[:-1]:
        node = node[key]
    node[where[-1]] = value
    try:
        plan = parse_import(json.dumps(doc))
    except InvalidImportError as exc:
        assert str(exc)
        return
    conversations = list(read_conversations(plan))
    assert [c.id for c in conversations] == [c.id for c in plan.conversations]
    assert len(plan.conversations) + len(plan.unreadable) <= len(_REALISTIC)
    for conversation in conversations:
        assert conversation.messages
        for message in conversation.messages:
            assert isinstance(message.content, str) and message.content.strip()
