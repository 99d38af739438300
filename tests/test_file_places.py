"""File dialogs open where the last file for the same purpose was chosen, else at home."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtWidgets import QFileDialog
from pytestqt.qtbot import QtBot

from assistant.ui import file_places
from assistant.ui.window.main_window import MainWindow
from tests.desktop import configure, shown_window
from tests.fake_openai import FakeOpenAI

pytestmark = pytest.mark.gui


@pytest.fixture(autouse=True)
def fresh_places(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    monkeypatch.setattr(file_places, "_last", {})
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    yield


@pytest.fixture
def window(qtbot: QtBot, data_dir: Path, fake_openai: FakeOpenAI) -> Iterator[MainWindow]:
    configure(data_dir, fake_openai)
    win = shown_window(qtbot, data_dir)
    yield win
    win.close()


def test_each_purpose_keeps_its_own_folder_and_a_gone_one_falls_back_to_home(
    tmp_path: Path,
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "report.pdf").write_bytes(b"%PDF")
    assert file_places.start_folder("attach") == Path.home()

    file_places.remember("attach", docs / "report.pdf")
    file_places.remember("export", "")  # cancelled: nothing to remember
    assert file_places.start_folder("attach") == docs
    assert file_places.start_folder("export") == Path.home()

    file_places.remember("knowledge", docs)  # a chosen folder is itself the place
    assert file_places.start_folder("knowledge") == docs

    (docs / "report.pdf").unlink()
    docs.rmdir()  # an unplugged drive, a deleted folder
    assert file_places.start_folder("attach") == Path.home()


def test_attach_opens_at_home_then_where_the_last_file_was_picked(
    qtbot: QtBot,
    window: MainWindow,
    fake_openai: FakeOpenAI,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    folder = tmp_path / "papers"
    folder.mkdir()
    notes = folder / "notes.txt"
    notes.write_text("The budget is 1,200 euros.\n")
    asked: list[str] = []

    def pick(_parent: object, _caption: str, start: str, _filter: str) -> tuple[list[str], str]:
        asked.append(start)
        return [str(notes)], ""

    monkeypatch.setattr(QFileDialog, "getOpenFileNames", staticmethod(pick))
    window.composer.pick_files()
    window.composer.pick_files()
    assert asked == [str(Path.home()), str(folder)]
