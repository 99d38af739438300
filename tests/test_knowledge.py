"""Knowledge folders: scanned by stat, read where they are, searched with the hybrid engine,
kept up to date by the watcher; bad files and folders get a status and the rest goes on."""

from __future__ import annotations

import os
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from assistant.knowledge import Knowledge, KnowledgeEvent, KnowledgeService, Sources
from assistant.knowledge.reading import ENCRYPTED, NO_TEXT_LAYER
from tests.embedders import HashEmbedder
from tests.files import make_pdf

WAIT = 60.0  # a guard against a hang, not a speed limit (the watcher is slow on a busy machine)


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "notes.md").write_text("# Trip\n\nThe ferry to Porto leaves at nine.\n")
    (folder / "src").mkdir()
    (folder / "src" / "main.py").write_text("def launch_rocket():\n    return 'countdown'\n")
    make_pdf(folder / "report.pdf", ["Intro page.", "Revenue grew by twelve percent in May."])
    (folder / ".hidden.md").write_text("The ferry secret.\n")
    (folder / ".git").mkdir()
    (folder / ".git" / "config.txt").write_text("ferry in git\n")
    (folder / "photo.png").write_bytes(b"\x89PNG not text")
    return folder


def open_knowledge(root: Path, *folders: Path) -> Knowledge:
    knowledge = Knowledge(root, HashEmbedder())
    sources = knowledge.sources
    for folder in folders:
        sources = sources.with_folder(str(folder))
    knowledge.set_sources(sources)
    return knowledge


def test_a_folder_is_indexed_and_searched_with_places(data_dir: Path, docs: Path) -> None:
    knowledge = open_knowledge(data_dir, docs)
    assert knowledge.sync() == 3  # the PDF, the Markdown and the code; not hidden, .git, images
    hit = knowledge.search("revenue in May", k=1)[0]
    assert (Path(hit.path).name, hit.place.page, hit.source()) == (
        "report.pdf",
        2,
        "report.pdf p. 2",
    )
    assert knowledge.search("launch rocket")[0].source() == "main.py lines 1-2"
    assert all(Path(h.path).name != ".hidden.md" for h in knowledge.search("ferry"))
    [state] = knowledge.states()
    assert (state.indexed, [Path(r.path).name for r in state.files]) == (
        3, ["notes.md", "report.pdf", "main.py"])  # fmt: skip


def test_reopening_rebuilds_the_index_from_records_without_reading_files(
    data_dir: Path, docs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = open_knowledge(data_dir, docs)
    first.sync()
    first.index.embed_pending()
    first.close()
    again = Knowledge(data_dir, HashEmbedder())
    reads: list[str] = []
    from assistant.knowledge import library

    real = library.read_file
    monkeypatch.setattr(
        library, "read_file", lambda p, *a, **k: reads.append(str(p)) or real(p, *a, **k)
    )
    assert again.sync() == 0  # unchanged: stat only
    assert reads == []
    assert again.search("ferry Porto")[0].source().startswith("notes.md")
    assert again.index.pending_embeddings() == 0  # the vectors came from the cache
    (docs / "notes.md").write_text("# Trip\n\nThe ferry to Porto leaves at ten.\n")
    os.utime(docs / "notes.md", ns=(1, 1))
    assert again.sync() == 1
    assert reads == [str(docs / "notes.md")]
    assert "ten" in again.search("ferry Porto")[0].text


def test_bad_files_get_a_status_and_the_rest_is_indexed(data_dir: Path, docs: Path) -> None:
    make_pdf(docs / "locked.pdf", ["secret plans"], password="pw")
    make_pdf(docs / "scan.pdf", [""], text=False)
    (docs / "fake.txt").write_bytes(b"\0\1\2binary")
    with (docs / "huge.log").open("wb") as f:
        f.truncate(2 * 2**30)
    (docs / "loop.md").symlink_to(docs / "loop2.md")
    (docs / "loop2.md").symlink_to(docs / "loop.md")
    (docs / "linked").symlink_to(docs)  # a folder link back up: not followed
    knowledge = open_knowledge(data_dir, docs)
    knowledge.sync()
    [state] = knowledge.states()
    status = {Path(r.path).name: r.status for r in state.files}
    assert status["locked.pdf"] == ENCRYPTED
    assert status["scan.pdf"] == NO_TEXT_LAYER
    assert status["fake.txt"].startswith("binary content")
    assert status["huge.log"] == "larger than the 50 MB limit: not read"
    assert status["notes.md"] == ""
    assert {Path(p).name: s for p, s in state.problems} == {
        "loop.md": "a symbolic link loop", "loop2.md": "a symbolic link loop"}  # fmt: skip
    assert knowledge.search("ferry Porto")


def test_a_folder_that_disappears_keeps_its_files_and_says_so(data_dir: Path, docs: Path) -> None:
    knowledge = open_knowledge(data_dir, docs)
    knowledge.sync()
    moved = docs.with_name("unplugged")
    docs.rename(moved)
    knowledge.sync()
    [state] = knowledge.states()
    assert state.problem == "it does not exist"
    assert state.indexed == 3
    moved.rename(docs)
    knowledge.sync()
    assert knowledge.states()[0].problem == ""


def test_a_folder_that_loses_its_permissions_says_so(
    data_dir: Path, docs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    knowledge = open_knowledge(data_dir, docs)
    knowledge.sync()
    real = os.scandir
    denied = {str(docs / "src"), str(docs)}

    def scandir(path: str) -> object:  # as chmod 0 would, also for root (who ignores modes)
        if str(path) in denied:
            raise PermissionError(13, "Permission denied", path)
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    denied.remove(str(docs))
    knowledge.sync()
    [state] = knowledge.states()
    assert dict(state.problems)[str(docs / "src")] == "folder not read: permission denied"
    denied.add(str(docs))
    knowledge.sync()
    [state] = knowledge.states()
    assert state.problem == "permission denied"
    assert state.indexed == 2  # kept: the folder may be readable again


def test_exclusions_and_the_size_limit_are_the_users(data_dir: Path, docs: Path) -> None:
    knowledge = open_knowledge(data_dir, docs)
    knowledge.set_sources(
        Sources(folders=(str(docs),), skip_hidden=False, exclude=("src", ".git"), max_file_mb=1)
    )
    knowledge.sync()
    names = sorted(Path(r.path).name for r in knowledge.states()[0].files)
    assert names == [".hidden.md", "notes.md", "report.pdf"]
    again, warnings = Sources.load(data_dir / "knowledge" / "folders.json")
    assert (again.exclude, again.max_file_mb, warnings) == (("src", ".git"), 1, [])


def test_removing_a_folder_drops_its_files(data_dir: Path, docs: Path) -> None:
    knowledge = open_knowledge(data_dir, docs)
    knowledge.sync()
    knowledge.set_sources(knowledge.sources.without_folder(str(docs)))
    knowledge.sync()
    assert knowledge.search("ferry") == []
    knowledge.close()
    again = Knowledge(data_dir, HashEmbedder())
    again.load()
    assert again.index.paths() == [] and again.states() == []


def test_an_unreadable_index_is_read_again_from_the_files(data_dir: Path, docs: Path) -> None:
    knowledge = open_knowledge(data_dir, docs)
    knowledge.sync()
    knowledge.close()
    (data_dir / "knowledge" / "passages.jsonl").write_text("{not json\n")
    again = Knowledge(data_dir, HashEmbedder())
    assert again.sync() == 3
    assert again.search("ferry Porto")
    assert sorted(p.name for p in docs.rglob("*") if p.is_file()) == [
        ".hidden.md", "config.txt", "main.py", "notes.md", "photo.png", "report.pdf"]  # fmt: skip


class Events:
    """The service's events, waited on by condition."""

    def __init__(self) -> None:
        self.seen: list[KnowledgeEvent] = []
        self._cond = threading.Condition()

    def __call__(self, event: KnowledgeEvent) -> None:
        with self._cond:
            self.seen.append(event)
            self._cond.notify_all()

    def wait_for(self, check: Callable[[], bool]) -> None:
        deadline = time.monotonic() + WAIT
        with self._cond:
            while not check():
                left = deadline - time.monotonic()
                assert left > 0, f"timed out; events: {self.seen[-5:]}"
                self._cond.wait(left)


@pytest.fixture
def service(data_dir: Path, docs: Path) -> Iterator[tuple[KnowledgeService, Events]]:
    events = Events()
    running = KnowledgeService(open_knowledge(data_dir, docs), events, debounce=0.05)
    running.start()
    yield running, events
    running.stop()


def found(service: KnowledgeService, query: str) -> set[str]:
    return {Path(h.path).name for h in service.knowledge.search(query)}


def test_the_watcher_follows_create_modify_rename_delete(
    service: tuple[KnowledgeService, Events], docs: Path
) -> None:
    running, events = service
    events.wait_for(lambda: found(running, "ferry") == {"notes.md"})
    events.wait_for(lambda: any(e.phase == "idle" for e in events.seen))
    (docs / "new.txt").write_text("A zeppelin over the harbour.\n")
    events.wait_for(lambda: found(running, "zeppelin") == {"new.txt"})
    (docs / "new.txt").write_text("A balloon over the harbour.\n")
    events.wait_for(lambda: found(running, "balloon") == {"new.txt"})
    assert found(running, "zeppelin") == set()
    (docs / "new.txt").rename(docs / "src" / "moved.txt")
    events.wait_for(lambda: found(running, "balloon") == {"moved.txt"})
    (docs / "src" / "moved.txt").unlink()
    events.wait_for(lambda: found(running, "balloon") == set())
    shutil.rmtree(docs / "src")
    events.wait_for(lambda: found(running, "rocket") == set())
    assert all(not e.problem for e in events.seen)


def test_a_rescan_applies_new_folders_and_reports_progress(
    service: tuple[KnowledgeService, Events], tmp_path: Path
) -> None:
    running, events = service
    other = tmp_path / "more"
    other.mkdir()
    for n in range(5):
        (other / f"f{n}.txt").write_text(f"Platypus number {n}.\n")
    events.wait_for(lambda: any(e.phase == "idle" for e in events.seen))
    running.knowledge.set_sources(running.knowledge.sources.with_folder(str(other)))
    running.rescan()
    events.wait_for(lambda: len(found(running, "platypus")) == 5)
    events.wait_for(
        lambda: any(e.phase == "reading" and e.done == e.total == 5 for e in events.seen)
    )
    reading = [e for e in events.seen if e.phase == "reading" and e.total == 5]
    assert [e.done for e in reading] == [0, 1, 2, 3, 4, 5]
    events.wait_for(lambda: running.knowledge.index.pending_embeddings() == 0)


def test_a_projects_folders_are_read_and_searched_only_in_its_chats(
    data_dir: Path, docs: Path, tmp_path: Path
) -> None:
    from assistant.workspace import Workspace

    plans = tmp_path / "plans"
    plans.mkdir()
    (plans / "launch.md").write_text("# Launch\n\nThe ferry launch party is on Friday.\n")
    open_knowledge(data_dir, docs)
    workspace = Workspace.open(data_dir, embed=False)
    try:
        knowledge = workspace.knowledge
        project = workspace.projects.create("Launch", knowledge=[str(plans)])
        other = workspace.projects.create("Other")
        assert knowledge.read_sources().folders == (str(docs), str(plans))
        assert knowledge.sync() == 4  # the global folder's three files and the project's one
        assert {Path(h.path).name for h in knowledge.search("ferry")} == {"notes.md"}
        assert {Path(h.path).name for h in knowledge.search("ferry", project=other.id)} == {
            "notes.md"
        }
        found = knowledge.search("ferry", project=project.id)
        assert {Path(h.path).name for h in found} == {"notes.md", "launch.md"}
        workspace.projects.update(project.id, knowledge=[])  # the project lets the folder go
        assert knowledge.read_sources().folders == (str(docs),)
        knowledge.sync()
        assert [Path(h.path).name for h in knowledge.search("party", project=project.id)] == []
    finally:
        workspace.close()


def test_a_folder_given_through_a_link_is_followed(data_dir: Path, docs: Path) -> None:
    # The watcher watched the link itself, not the folder it names: changes went unseen.
    link = docs.parent / "docs-link"
    link.symlink_to(docs, target_is_directory=True)
    events = Events()
    running = KnowledgeService(open_knowledge(data_dir, link), events, debounce=0.05)
    running.start()
    try:
        events.wait_for(lambda: any(e.phase == "idle" for e in events.seen))
        assert found(running, "ferry") == {"notes.md"}
        (docs / "new.txt").write_text("A zeppelin over the harbour.\n")
        events.wait_for(lambda: found(running, "zeppelin") == {"new.txt"})
        hit = running.knowledge.search("zeppelin")[0]
        assert hit.path == str(link / "new.txt")  # under the name the folder was given
    finally:
        running.stop()
