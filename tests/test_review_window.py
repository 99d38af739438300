"""The review inbox through the real window: with "ask first", what the curator finds waits on
the sidebar's Review tab (its count on the tab), and is accepted, edited then accepted, or
rejected there, one by one or all at once; the Remembering page of Settings sets the policy;
the sidebar tells the user's memories from the model's (a mark, and a filter)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtCore import Qt, QUrl
from PySide6.QtWidgets import QCheckBox, QPlainTextEdit, QRadioButton, QWidget
from pytestqt.qtbot import QtBot

from assistant.memory.inbox import Proposal
from assistant.paths import settings_file
from assistant.ui.bridge import StoreBridge
from assistant.ui.memory.model import ItemRole
from assistant.ui.memory.sidebar import REVIEW_TAB
from assistant.ui.memory.wording import ORIGIN_ICONS
from assistant.ui.settings.dialog import SettingsDialog
from assistant.ui.window.main_window import MainWindow
from assistant.workspace import Workspace
from tests.desktop import configure, shown_window
from tests.fake_openai import FakeOpenAI, Reply, ToolCall
from tests.sidebars import shown_sidebar

pytestmark = [
    pytest.mark.gui,
    pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints"),
]


def extraction(*texts: str) -> str:
    memories = [{"kind": "fact", "text": t, "importance": 0.6, "topic": "life"} for t in texts]
    return json.dumps({"memories": memories})


def say(qtbot: QtBot, win: MainWindow, text: str, reply: str) -> None:
    win.input.setPlainText(text)
    win.send_button.click()
    qtbot.waitUntil(lambda: reply in win.chat.toPlainText(), timeout=10000)


def review_tab(win: MainWindow) -> str:
    return win.sidebar.tabs.tabText(REVIEW_TAB)


def chat_prompts(server: FakeOpenAI) -> list[str]:
    """The system messages of the chat requests (not the curator's)."""
    systems = [r.body["messages"][0]["content"] for r in server.requests_to("/chat/completions")]
    return [s for s in systems if s.startswith("You are Assistant")]


def test_ask_first_through_the_window(
    qtbot: QtBot, data_dir: Path, fake_openai: FakeOpenAI
) -> None:
    configure(
        data_dir,
        fake_openai,
        embeddings=False,
        auto_memories=True,
        memory_policy="ask",
        never_remember=["health"],
    )
    win = shown_window(qtbot, data_dir)
    memory, page = win.workspace.memory, win.sidebar.review
    assert review_tab(win) == "Review" and not page.intro.isHidden()

    fake_openai.enqueue(
        Reply.text("Noted, all three."),
        extraction("The user lives in Lisbon", "The user likes figs", "The user has asthma"),
    )
    say(qtbot, win, "I live in Lisbon, love figs, and have asthma.", "Noted, all three.")
    qtbot.waitUntil(lambda: review_tab(win) == "Review (2)", timeout=10000)
    assert len(memory) == 0  # nothing is kept before the user says so
    win.sidebar.tabs.setCurrentIndex(REVIEW_TAB)
    assert page.list.count() == 2 and "found in the conversation" in page.list.item(0).text()

    # Edit the first, then accept it.
    page.list.item(0).setSelected(True)
    assert page.editor.toPlainText() == "The user lives in Lisbon"
    page.editor.setPlainText("The user lives in Lisbon, Portugal")
    page.accept_button.click()
    qtbot.waitUntil(lambda: review_tab(win) == "Review (1)", timeout=10000)
    (kept,) = memory.all()
    assert kept.text == "The user lives in Lisbon, Portugal" and kept.origin == "curator"
    assert "Kept 1 memory." in page.notice.label.text()

    # Reject the other: gone, and never proposed again.
    page.list.item(0).setSelected(True)
    page.reject_button.click()
    qtbot.waitUntil(lambda: review_tab(win) == "Review", timeout=10000)
    assert memory.resemblance("The user likes figs") is not None and len(memory) == 1
    assert not page.intro.isHidden() and page.list.isHidden()

    # The rejected and the waiting never reach the prompt; what was accepted does.
    fake_openai.enqueue(
        Reply.text("Figs again?"),
        extraction("The user likes figs", "The user keeps bees", "The user sails"),
    )
    say(qtbot, win, "Lisbon figs, and I keep bees and sail.", "Figs again?")
    qtbot.waitUntil(lambda: review_tab(win) == "Review (2)", timeout=10000)
    assert [p.text for p in win.workspace.inbox.pending()] == [
        "The user keeps bees",
        "The user sails",
    ]
    fake_openai.enqueue(Reply.text("You keep bees?"), extraction())
    say(qtbot, win, "Do I keep bees? Where do I live?", "You keep bees?")
    last = chat_prompts(fake_openai)[-1]
    assert "bees" not in last.split("Current date")[1] and "Lisbon, Portugal" in last

    # All at once.
    page.accept_all_button.click()
    qtbot.waitUntil(lambda: review_tab(win) == "Review", timeout=10000)
    assert {i.text for i in memory.all()} == {
        "The user lives in Lisbon, Portugal",
        "The user keeps bees",
        "The user sails",
    }
    assert win.sidebar.memories.model.rowCount() == 3
    win.close()


def test_the_remembering_page_sets_the_policy(
    qtbot: QtBot, data_dir: Path, fake_openai: FakeOpenAI
) -> None:
    configure(data_dir, fake_openai, embeddings=False)
    win = shown_window(qtbot, data_dir)
    dialog = SettingsDialog(win.workspace, win)
    qtbot.addWidget(dialog)
    dialog.show()
    assert dialog.findChild(QRadioButton, "memoryPolicy_automatic").isChecked()  # type: ignore[union-attr]
    dialog.findChild(QRadioButton, "memoryPolicy_ask").setChecked(True)  # type: ignore[union-attr]
    dialog.findChild(QCheckBox, "neverTopic_money").setChecked(True)  # type: ignore[union-attr]
    own = dialog.findChild(QPlainTextEdit, "neverOwnTopics")
    assert own is not None
    own.setPlainText("the\n")
    warned: list[str] = []
    dialog._warn = warned.append  # type: ignore[method-assign]
    dialog.accept()
    assert warned == ["'the' has no word to look for."] and dialog.isVisible()
    own.setPlainText("my ex\n\npolitics\nMy Ex")
    dialog.accept()
    saved = json.loads(settings_file(data_dir).read_text())
    assert saved["memory_policy"] == "ask" and saved["never_remember"] == ["money"]
    assert saved["never_remember_own"] == ["my ex", "politics"]
    assert win.workspace.settings.policy().mode == "ask"
    win.sidebar.review.refresh()
    assert "What Assistant wants to remember appears here first" in win.sidebar.review.intro.text()
    win.close()


def test_the_sidebar_tells_the_users_memories_from_the_models(qtbot: QtBot, data_dir: Path) -> None:
    workspace = Workspace.open(data_dir, embed=False)
    bridge = StoreBridge(workspace)
    try:
        for text, origin in [
            ("The user likes figs", "user"),
            ("The user keeps bees", "curator"),
            ("The user sails", "tool"),
            ("The user rows", "import"),
        ]:
            workspace.memory.add(text, origin=origin)  # type: ignore[arg-type]
        workspace.memory.add("The user's cat is Miso", origin="mcp", client="QA Client")
        sidebar = shown_sidebar(qtbot, workspace, bridge)
        page = sidebar.memories
        combo = page.filters.author_filter
        shown = lambda: {page.model.index(r).data() for r in range(page.model.rowCount())}  # noqa: E731
        marks = {
            page.model.index(r).data(): page.model.index(r).data(ItemRole)
            for r in range(page.model.rowCount())
        }
        assert {item.origin for item in marks.values()} == {
            "user",
            "curator",
            "tool",
            "import",
            "mcp",
        }
        assert ORIGIN_ICONS["user"] != ORIGIN_ICONS["curator"] != ORIGIN_ICONS["tool"]
        combo.setCurrentIndex(combo.findData("you"))
        assert shown() == {"The user likes figs"}
        combo.setCurrentIndex(combo.findData("model"))
        assert shown() == {"The user keeps bees", "The user sails"}  # not another app's
        combo.setCurrentIndex(combo.findData("mcp"))
        assert combo.currentText() == "From other apps"
        assert shown() == {"The user's cat is Miso"}
        labels = [combo.itemText(i) for i in range(combo.count())]
        widest = max(combo.fontMetrics().horizontalAdvance(label) for label in labels)
        assert combo.width() > widest  # no label cut ("By the m") at a sidebar's width
        combo.setCurrentIndex(combo.findData("import"))
        assert shown() == {"The user rows"}
        # Showing a memory the filter hides shows everyone again.
        (figs,) = [i for i in workspace.memory.all() if i.origin == "user"]
        assert page.show_memory(figs.id) and combo.currentData() == ""
        assert len(shown()) == 5
    finally:
        bridge.disconnect_stores()
        workspace.close()


@pytest.mark.qt_log_ignore("does not support raise", "does not support propagateSizeHints")
def test_a_memory_the_assistant_proposes_reads_as_proposed_then_as_accepted(
    qtbot: QtBot, data_dir: Path, fake_openai: FakeOpenAI
) -> None:
    from assistant.ui.memory.timeline import MemoryTimeline

    configure(data_dir, fake_openai, embeddings=False, memory_policy="ask")
    win = shown_window(qtbot, data_dir)
    fake_openai.enqueue(
        Reply.tool_calls(ToolCall("remember", json.dumps({"text": "I am allergic to peanuts"}))),
        Reply.text("It waits for you in Review."),
    )
    say(qtbot, win, "Remember that I am allergic to peanuts", "It waits for you in Review.")
    shown = win.chat.toPlainText()
    # Not a memory yet: no ◆ (it looked saved), and its chip opens the Review tab.
    proposed = "▸ Proposed for review · ◇ I am allergic to peanuts (waiting for your review)"
    assert proposed in shown and "◆" not in shown
    assert "Remembered" not in shown  # nothing is kept yet
    qtbot.waitUntil(lambda: review_tab(win) == "Review (1)", timeout=10000)

    page = win.sidebar.review
    win.chat.anchorClicked.emit(QUrl("review:"))
    assert win.sidebar.tabs.currentWidget() is page
    page.list.item(0).setSelected(True)
    page.accept_button.click()
    qtbot.waitUntil(lambda: len(win.workspace.memory) == 1, timeout=10000)
    win.sidebar.tabs.setCurrentIndex(0)
    win.sidebar.memories.timeline_button.click()
    timeline = win.sidebar.findChild(MemoryTimeline, "memoryTimeline")
    assert timeline is not None
    qtbot.waitUntil(lambda: "peanuts" in timeline.view.toPlainText(), timeout=10000)
    assert (
        "Remembered by the assistant, accepted by you · I am allergic to peanuts"
        in timeline.view.toPlainText()
    )
    timeline.close()
    win.close()

    again = Workspace.open(data_dir)  # the log keeps who said yes
    try:
        (item,) = again.memory.all()
        (created,) = [e for e in again.memory.history(item.id) if e.type == "created"]
        assert created.by == "tool" and created.reason == "accepted by you"
    finally:
        again.close()


def test_the_review_tab_keeps_its_layout_after_the_last_is_accepted(
    qtbot: QtBot, data_dir: Path, fake_openai: FakeOpenAI
) -> None:
    configure(data_dir, fake_openai, embeddings=False, memory_policy="ask")
    win = shown_window(qtbot, data_dir)
    win.resize(1366, 768)
    fake_openai.enqueue(
        Reply.tool_calls(ToolCall("remember", json.dumps({"text": "I am allergic to peanuts"}))),
        Reply.text("It waits for you in Review."),
    )
    say(qtbot, win, "Remember that I am allergic to peanuts", "It waits for you in Review.")
    qtbot.waitUntil(lambda: review_tab(win) == "Review (1)", timeout=10000)
    page = win.sidebar.review
    win.sidebar.tabs.setCurrentIndex(REVIEW_TAB)
    qtbot.waitUntil(page.accept_button.isVisible)
    buttons_at = page.accept_button.mapTo(page, page.accept_button.rect().topLeft()).y()
    page.list.item(0).setSelected(True)
    page.accept_button.click()
    qtbot.waitUntil(lambda: "Kept 1 memory." in page.notice.label.text(), timeout=10000)
    qtbot.waitUntil(page.list.isHidden)
    qtbot.wait(10)  # laid out again
    line = page.notice.fontMetrics().lineSpacing()
    assert page.notice.height() <= 2 * line + 16  # its line, not the room the list left
    after = page.accept_button.mapTo(page, page.accept_button.rect().topLeft()).y()
    assert after >= buttons_at - page.notice.height() - 12  # at the bottom, over the notice
    win.close()


def test_after_accept_the_focus_stays_on_the_list_then_goes_to_the_message_box(
    qtbot: QtBot, data_dir: Path, fake_openai: FakeOpenAI
) -> None:
    """The focused Accept button is disabled while the proposals are kept, and Qt moved the
    focus on to the next widget: into the chat, on a link. It stays on the list, on the next
    proposal, as a mail app's after a message is filed; after the last, on the message box."""
    configure(data_dir, fake_openai, embeddings=False, auto_memories=True, memory_policy="ask")
    win = shown_window(qtbot, data_dir)
    win.activateWindow()
    page = win.sidebar.review
    fake_openai.enqueue(
        Reply.text("Noted."), extraction("The user lives in Lisbon", "The user likes figs")
    )
    say(qtbot, win, "I live in Lisbon and love figs.", "Noted.")
    qtbot.waitUntil(lambda: review_tab(win) == "Review (2)", timeout=10000)
    win.sidebar.tabs.setCurrentIndex(REVIEW_TAB)
    page.list.item(0).setSelected(True)
    page.accept_button.setFocus()
    qtbot.waitUntil(page.accept_button.hasFocus)
    qtbot.keyClick(page.accept_button, Qt.Key.Key_Space)
    qtbot.waitUntil(lambda: review_tab(win) == "Review (1)", timeout=10000)
    qtbot.waitUntil(page.accept_all_button.isEnabled)
    assert page.list.hasFocus()
    assert [p.text for p in page.selected()] == ["The user likes figs"]
    page.accept_button.setFocus()
    qtbot.keyClick(page.accept_button, Qt.Key.Key_Space)
    qtbot.waitUntil(lambda: review_tab(win) == "Review", timeout=10000)
    qtbot.waitUntil(win.input.hasFocus)
    assert sorted(m.text for m in win.workspace.memory.all()) == [
        "The user likes figs",
        "The user lives in Lisbon",
    ]


def test_a_notice_does_not_move_the_buttons_under_the_next_click(
    qtbot: QtBot, data_dir: Path
) -> None:
    workspace = Workspace.open(data_dir, embed=False)
    bridge = StoreBridge(workspace)
    try:
        workspace.memory.add("The user likes figs", origin="user")
        workspace.inbox.propose([Proposal("The user sails"), Proposal("The user rows")])
        sidebar = shown_sidebar(qtbot, workspace, bridge)
        page = sidebar.review
        sidebar.tabs.setCurrentIndex(REVIEW_TAB)
        qtbot.waitUntil(lambda: page.list.count() == 2)
        qtbot.waitUntil(page.accept_button.isVisible)

        def top(widget: QWidget) -> int:
            return widget.mapTo(sidebar, widget.rect().topLeft()).y()

        accept_at = top(page.accept_button)
        page.list.item(0).setSelected(True)
        page.reject_button.click()
        qtbot.waitUntil(lambda: "Rejected 1 memory." in page.notice.label.text())
        qtbot.waitUntil(lambda: page.list.count() == 1)
        qtbot.waitUntil(lambda: page.notice.height() > 0 and top(page.notice) < top(page.list))
        assert top(page.accept_button) == accept_at

        sidebar.tabs.setCurrentIndex(0)
        memories = sidebar.memories
        qtbot.waitUntil(memories.forget_button.isVisible)
        forget_at = top(memories.forget_button)
        (figs,) = workspace.memory.all()
        memories.controller.forget_memory(figs.id)
        qtbot.waitUntil(memories.notice.isVisible)
        qtbot.waitUntil(lambda: top(memories.notice) < top(memories.list_frame))
        assert top(memories.forget_button) == forget_at
    finally:
        bridge.disconnect_stores()
        workspace.close()


def test_switching_what_it_finds_does_not_move_the_never_boxes(qtbot: QtBot) -> None:
    from PySide6.QtCore import QCoreApplication, QEvent

    from assistant.settings import Settings
    from assistant.ui.settings.policy_page import PolicyPage

    page = PolicyPage()
    qtbot.addWidget(page)
    page.load(Settings())
    page.resize(560, 520)
    page.show()
    qtbot.waitExposed(page)
    health = page.never["health"]

    def settled_top() -> int:
        for _ in range(3):  # the note's new height, then the layouts under it
            QCoreApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)
        return health.mapTo(page, health.rect().topLeft()).y()

    before = settled_top()
    for mode in ("ask", "on_request", "automatic", "ask"):
        page._mode_buttons[mode].click()
        assert settled_top() == before, mode
