"""Find in the conversation (Ctrl+F), search across conversations (Ctrl+K), and what is kept."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt, QThread
from pytestqt.qtbot import QtBot

from assistant.memory import ConversationStore
from assistant.ui import shutdown
from assistant.ui.conversations.hit_delegate import HIT_TEXT_ROLE, hit_html
from assistant.ui.conversations.search import ChatSearchDialog
from assistant.ui.window import closing
from assistant.ui.window.main_window import MainWindow
from assistant.workspace import Workspace
from tests.desktop import new_saved_chat, shown_window

pytestmark = pytest.mark.gui


@pytest.fixture
def window(qtbot: QtBot, data_dir: Path) -> Iterator[MainWindow]:
    store = ConversationStore(data_dir)
    for title, words in (("Trip", "the train to Lisbon leaves at nine"), ("Tax", "forms")):
        cid = store.create(title).id
        store.append(cid, "user", f"Question about {title}")
        store.append(cid, "assistant", f"Answer: {words}")
    win = shown_window(qtbot, data_dir)
    yield win
    win.close()


def test_find_in_the_conversation_selects_each_match_in_turn(
    qtbot: QtBot, window: MainWindow
) -> None:
    window.show_message(*_hit(window, "Lisbon"))
    window.menu.find.trigger()
    assert window.find_bar.isVisible()
    qtbot.keyClicks(window.find_bar.field, "lisbon")
    assert window.chat.textCursor().selectedText().lower() == "lisbon"
    assert window.find_bar.status.text() == "1 of 1"
    qtbot.keyClick(window.find_bar.field, Qt.Key.Key_Return)  # wraps to the only match again
    assert window.chat.textCursor().selectedText().lower() == "lisbon"
    window.find_bar.field.setText("answer")  # "Answer: ..." once, and in no other message
    assert window.find_bar.status.text() == "1 of 1"
    window.find_bar.field.setText("o")
    shown_words = ("Question about Trip", "Answer: the train to Lisbon leaves at nine")
    total = sum(words.count("o") for words in shown_words)  # not the "o" of "You", "Copy"
    shown, _, of = window.find_bar.status.text().partition(" of ")
    assert of == str(total) and 1 <= int(shown) <= total
    for step in range(1, total + 1):  # once round, wrapping at the end
        qtbot.keyClick(window.find_bar.field, Qt.Key.Key_Return)
        assert window.find_bar.status.text() == f"{(int(shown) + step - 1) % total + 1} of {total}"
    qtbot.keyClick(window.find_bar.field, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    assert window.find_bar.status.text() == f"{(int(shown) - 2) % total + 1} of {total}"
    window.find_bar.field.setText("nowhere to be found")
    assert window.find_bar.status.text() == "Not found"
    qtbot.keyClick(window.find_bar.field, Qt.Key.Key_Escape)
    assert not window.find_bar.isVisible()


def test_search_across_conversations_opens_the_hit_at_its_message(
    qtbot: QtBot, window: MainWindow
) -> None:
    dialog = ChatSearchDialog(window.workspace.conversations, window)
    qtbot.addWidget(dialog)
    dialog.chosen.connect(window.show_message)
    dialog.field.setText("train lisbon")
    dialog.run_search()
    qtbot.waitUntil(lambda: not dialog.searching)
    assert dialog.hits.count() == 1
    assert dialog.hits.item(0).text().startswith("Trip\n")
    with qtbot.waitSignal(dialog.chosen) as chosen:
        qtbot.keyClick(dialog.field, Qt.Key.Key_Return)
    cid, mid = chosen.args
    assert window.conversations.current_id() == cid
    assert "Lisbon" in window.chat.textCursor().selectedText()
    assert mid in {m.id for m in window.workspace.conversations.load(cid).messages}


def test_temporary_and_empty_chats_are_gone_after_quitting(qtbot: QtBot, data_dir: Path) -> None:
    store = ConversationStore(data_dir)
    leftover = store.create("left from a crash", temporary=True).id
    empty = store.create().id
    win = MainWindow(Workspace.open(data_dir))
    qtbot.addWidget(win)
    assert {c.id for c in win.workspace.conversations.all()} & {leftover, empty} == set()
    temporary = new_saved_chat(qtbot, win, temporary=True)
    win.workspace.conversations.append(temporary, "user", "not to be kept")
    win.close()
    shutdown.join_all()  # work that outlived the window's wait (a busy machine) ends here
    assert not ConversationStore(data_dir).exists(temporary)


def test_a_temporary_chat_goes_when_work_that_outlived_quitting_ends(
    qtbot: QtBot, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = ConversationStore(data_dir)
    kept = store.create("kept").id
    store.append(kept, "user", "to be kept")
    win = MainWindow(Workspace.open(data_dir))
    qtbot.addWidget(win)
    temporary = new_saved_chat(qtbot, win, temporary=True)
    win.workspace.conversations.append(temporary, "user", "not to be kept")

    def still_working(thread: QThread) -> bool:  # the wait ran out: work goes on after it
        thread.quit()
        return False

    monkeypatch.setattr(closing, "stop_thread", still_working)
    win.close()
    shutdown.join_all()
    assert not ConversationStore(data_dir).exists(temporary)
    assert ConversationStore(data_dir).exists(kept)


def _hit(window: MainWindow, word: str) -> tuple[str, str]:
    (hit,) = window.workspace.conversations.search(word, k=1)
    return hit.conversation_id, hit.message_id


def test_search_hits_mark_the_words_searched_for(qtbot: QtBot, window: MainWindow) -> None:
    assert hit_html("Trip", "The train to Lisbon's station", "lisbon TRAIN a", "#777777") == (
        "<div><b>Trip</b></div><div style='color:#777777'>"
        "The <b>train</b> to <b>Lisbon</b>&#x27;s station</div>"
    )
    assert hit_html("T", "x < y & amp", "amp lt", "#000000") == (
        "<div><b>T</b></div><div style='color:#000000'>x &lt; y &amp; <b>amp</b></div>"
    )
    dialog = ChatSearchDialog(window.workspace.conversations, window)
    qtbot.addWidget(dialog)
    dialog.field.setText("lisbon")
    dialog.run_search()
    qtbot.waitUntil(lambda: not dialog.searching)
    item = dialog.hits.item(0)
    answer = "Answer: the train to Lisbon leaves at nine"
    assert item.data(HIT_TEXT_ROLE) == ("Trip", answer, "lisbon")
    assert item.text().startswith("Trip\n")  # what screen readers read
    dialog.hits.grab()  # the delegate paints it, selected
    assert dialog.hits.visualItemRect(item).height() > dialog.fontMetrics().height() * 2


def test_weak_hits_are_left_out_and_said(qtbot: QtBot, data_dir: Path) -> None:
    """A message that shares one common word with the query scores under half of the best
    hit's: Ctrl+K leaves it out and says how many it left out."""
    store = ConversationStore(data_dir)
    texts = {
        "Kyoto": "the tea ceremony in Kyoto: matcha, the tea house, the tea master's sweets",
        "Shopping": "buy tea bags and milk",
        **{f"Other {n}": f"notes about gardening, week {n}" for n in range(6)},
    }
    for title, text in texts.items():
        cid = store.create(title).id
        store.append(cid, "user", text)
    win = shown_window(qtbot, data_dir)
    dialog = ChatSearchDialog(win.workspace.conversations, win)
    qtbot.addWidget(dialog)
    found = win.workspace.conversations.search("tea ceremony Kyoto", k=30)
    assert [h.title for h in found] == ["Kyoto", "Shopping"]
    assert found[1].score < 0.5 * found[0].score
    dialog.field.setText("tea ceremony Kyoto")
    dialog.run_search()
    qtbot.waitUntil(lambda: not dialog.searching)
    assert [dialog.hits.item(i).text().split("\n")[0] for i in range(dialog.hits.count())] == [
        "Kyoto"
    ]
    assert dialog.status.text() == "1 found (1 weaker not shown); Enter opens one."
    win.close()
