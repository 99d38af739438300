"""Focus in the main window: where Tab lands in the chat, where typing goes after a click on a
Copy, Retry or Accept link or on the Review tab's Accept, and the focus ring that shows where
the keyboard is, in both themes."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QColor, QGuiApplication, QImage, QTextCursor
from PySide6.QtWidgets import QApplication, QWidget
from pytestqt.qtbot import QtBot

from assistant.memory import ConversationStore
from assistant.ui import focus_ring, theme
from assistant.ui.chat.view import ChatView
from assistant.ui.window.main_window import MainWindow
from tests.desktop import configure, shown_window
from tests.fake_openai import FakeOpenAI, Reply, ToolCall
from tests.test_main_window import send, wait_idle

pytestmark = pytest.mark.gui


@pytest.fixture
def window(qtbot: QtBot, data_dir: Path, fake_openai: FakeOpenAI) -> Iterator[MainWindow]:
    """A window on a conversation of three turns, its panes shown, the message box focused."""
    configure(data_dir, fake_openai)
    store = ConversationStore(data_dir)
    cid = store.create("Tea").id
    for number in range(3):
        store.append(cid, "user", f"Question {number}")
        store.append(cid, "assistant", f"Answer {number}: **tea**.")
    win = shown_window(qtbot, data_dir)
    win.resize(1200, 700)  # room for the three panes
    win.menu.show_conversations.setChecked(True)
    win.menu.show_memory.setChecked(True)
    win.workspace.memory.add("The user likes tea")  # the memory list, not its empty state
    qtbot.waitUntil(lambda: win.sidebar.memories.model.rowCount() == 1)
    win.activateWindow()
    win.input.setFocus()
    qtbot.waitUntil(win.input.hasFocus)
    yield win
    win.close()
    theme.apply("system")


def link_point(view: ChatView, href: str, last: bool = True) -> QPoint:
    """Where on the view's viewport the (last) link to `href` is drawn."""
    found = None
    block = view.document().begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fragment = it.fragment()
            if fragment.charFormat().anchorHref() == href:
                found = fragment.position() + fragment.length() // 2
                if not last:
                    break
            it += 1
        block = block.next()
    assert found is not None, href
    cursor = QTextCursor(view.document())
    cursor.setPosition(found)
    return view.cursorRect(cursor).center()


def selected_href(view: ChatView) -> str:
    """The link the chat's keyboard cursor is on."""
    cursor = view.textCursor()
    assert cursor.hasSelection()
    probe = QTextCursor(view.document())
    probe.setPosition(cursor.selectionStart() + 1)
    return probe.charFormat().anchorHref()


def test_after_a_click_on_copy_typing_goes_to_the_message_box(
    qtbot: QtBot, window: MainWindow
) -> None:
    reply_id = window.session.conversation.branch()[-1].id  # type: ignore[union-attr]
    href = f"copy:{reply_id}"
    window.chat.ensureCursorVisible()
    point = link_point(window.chat, href)
    qtbot.mouseClick(window.chat.viewport(), Qt.MouseButton.LeftButton, pos=point)
    assert QGuiApplication.clipboard().text() == "Answer 2: **tea**."
    qtbot.waitUntil(window.input.hasFocus)
    qtbot.keyClicks(QApplication.focusWidget(), "and milk")
    assert window.input.toPlainText() == "and milk"


def test_after_retry_by_click_or_by_key_typing_goes_to_the_message_box(
    qtbot: QtBot, window: MainWindow, fake_openai: FakeOpenAI
) -> None:
    """Retry redraws the conversation; the focus stayed in the chat, on a link (Tab order's
    next), so typing went nowhere."""
    fake_openai.enqueue(Reply.error(401), Reply.text("Here now."), Reply.error(401))
    send(qtbot, window, "Are you there?")
    wait_idle(qtbot, window)
    cid = window.session.conversation_id
    assert cid is not None
    asked = window.workspace.conversations.load(cid).messages[-1]
    point = link_point(window.chat, f"retry:{asked.id}")
    qtbot.mouseClick(window.chat.viewport(), Qt.MouseButton.LeftButton, pos=point)
    qtbot.waitUntil(lambda: "Here now." in window.chat.toPlainText(), timeout=10000)
    wait_idle(qtbot, window)
    assert window.input.hasFocus()

    send(qtbot, window, "And again?")
    wait_idle(qtbot, window)
    fake_openai.enqueue(Reply.text("Back again."))
    qtbot.keyClick(window.input, Qt.Key.Key_Backtab)
    while not window.chat.hasFocus():  # past the send button
        qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Backtab)
    again = window.workspace.conversations.load(cid).messages[-1]
    assert selected_href(window.chat) == f"retry:{again.id}"
    qtbot.keyClick(window.chat, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: "Back again." in window.chat.toPlainText(), timeout=10000)
    wait_idle(qtbot, window)
    assert window.input.hasFocus()
    qtbot.keyClicks(QApplication.focusWidget(), "thanks")
    assert window.input.toPlainText() == "thanks"


def test_after_accepting_a_suggestion_typing_goes_to_the_message_box(
    qtbot: QtBot, window: MainWindow, fake_openai: FakeOpenAI
) -> None:
    from assistant.agent.change_budget import MAX_ADDS_PER_REPLY

    calls = [
        ToolCall("remember", json.dumps({"text": f"Fact number {i} zq{i}"}))
        for i in range(MAX_ADDS_PER_REPLY + 1)
    ]
    fake_openai.enqueue(Reply.tool_calls(*calls), Reply.text("Saved what I could."))
    send(qtbot, window, "Remember these")
    wait_idle(qtbot, window)
    qtbot.waitUntil(lambda: "💡 Suggested" in window.chat.toPlainText(), timeout=10000)
    cid = window.session.conversation_id
    assert cid is not None
    (pending,) = window.workspace.conversations.load(cid).pending
    point = link_point(window.chat, f"pending-memory:accepted:{pending.id}")
    qtbot.mouseClick(window.chat.viewport(), Qt.MouseButton.LeftButton, pos=point)
    qtbot.waitUntil(lambda: "↺ Remembered “Fact number" in window.chat.toPlainText(), timeout=10000)
    assert window.input.hasFocus()


def test_tab_into_the_chat_starts_at_the_last_message(qtbot: QtBot, window: MainWindow) -> None:
    """From the list, Tab reaches the last reply's links (not the first message's); Shift+Tab
    from the message box reaches the last link; Tab from the last link leaves the chat."""
    last_reply = window.session.conversation.branch()[-1]  # type: ignore[union-attr]
    window.conversations.view.setFocus(Qt.FocusReason.OtherFocusReason)
    qtbot.waitUntil(window.conversations.view.hasFocus)
    for _ in range(60):  # past the panes' widgets, whatever they are
        qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Tab)
        if window.chat.hasFocus():
            break
    assert window.chat.hasFocus()
    assert selected_href(window.chat) == f"copy:{last_reply.id}"
    window.input.setFocus()
    qtbot.keyClick(window.input, Qt.Key.Key_Backtab)
    while not window.chat.hasFocus():  # the send button first
        qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Backtab)
    assert selected_href(window.chat) == f"regenerate:{last_reply.parent_id}"
    qtbot.keyClick(window.chat, Qt.Key.Key_Tab)
    assert not window.chat.hasFocus()


def _ring_pixels(image: QImage, rect: tuple[int, int, int, int], colour: QColor) -> float:
    """The share of pixels along the outside of `rect`'s edge (1 px out) that are `colour`."""
    x, y, w, h = rect
    points = [(x + i, row) for i in range(4, w - 4) for row in (y - 1, y + h)]
    points += [(column, y + j) for j in range(4, h - 4) for column in (x - 1, x + w)]
    points = [(px, py) for px, py in points if image.rect().contains(px, py)]  # not off the edge
    near = 0
    for px, py in points:
        pixel = image.pixelColor(px, py)
        if (
            max(
                abs(pixel.red() - colour.red()),
                abs(pixel.green() - colour.green()),
                abs(pixel.blue() - colour.blue()),
            )
            <= 40
        ):
            near += 1
    return near / len(points)


@pytest.mark.parametrize("name", ["light", "dark"])
def test_every_widget_tab_reaches_shows_a_focus_ring(
    qtbot: QtBot, window: MainWindow, name: str
) -> None:
    """The ring is the highlight colour at 3:1 or more against the window, and it is drawn
    round every widget Tab reaches (it was missing on lists, the chat, the message box)."""
    window.set_theme(name)
    palette = theme.palette_for(name)
    colour = focus_ring.ring_colour(palette)
    assert theme.contrast(colour, palette.color(palette.ColorRole.Window)) >= 3.0
    assert theme.contrast(colour, palette.color(palette.ColorRole.Base)) >= 3.0
    window.input.setFocus()
    qtbot.waitUntil(window.input.hasFocus)
    seen: list[str] = []
    for _ in range(60):
        widget = QApplication.focusWidget()
        assert isinstance(widget, QWidget)
        qtbot.wait(20)  # the ring paints
        image = window.grab().toImage()
        top_left = widget.mapTo(window, QPoint(0, 0))
        share = _ring_pixels(
            image, (top_left.x(), top_left.y(), widget.width(), widget.height()), colour
        )
        assert share > 0.8, f"{widget.objectName() or type(widget).__name__}: {share:.0%}"
        seen.append(widget.objectName())
        qtbot.keyClick(widget, Qt.Key.Key_Tab)
        if QApplication.focusWidget() is window.input:
            break
    assert {"chatInput", "conversationList", "chatView", "memoryList", "sendButton"} <= set(seen)


def test_a_click_on_a_button_shows_no_ring_but_a_click_in_a_text_field_does(
    qtbot: QtBot, window: MainWindow
) -> None:
    rings = focus_ring.install()
    qtbot.mouseClick(window.conversations.view.viewport(), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(window.conversations.view.hasFocus)
    ring = rings.ring_of(window)
    assert ring is not None and ring.isHidden()
    qtbot.mouseClick(window.input, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(window.input.hasFocus)
    assert ring.isVisible() and ring.widget() is window.input


@pytest.mark.parametrize("name", ["light", "dark"])
def test_drawn_icons_follow_a_change_of_theme(qtbot: QtBot, window: MainWindow, name: str) -> None:
    """The drawn icons (search, Add memory) take the new theme's colours (they kept the first
    theme's: black on dark grey)."""
    palette = theme.palette_for(name)
    base = palette.color(palette.ColorRole.Base)
    window.set_theme("light" if name == "dark" else "dark")
    window.set_theme(name)
    memories = window.sidebar.memories
    for icon in (memories.filters.search.actions()[0].icon(), memories.controller.add.icon()):
        image = icon.pixmap(16, 16).toImage()
        drawn = [image.pixelColor(x, y) for x in range(16) for y in range(16)]
        solid = [QColor(c.red(), c.green(), c.blue()) for c in drawn if c.alpha() > 200]
        assert solid and max(theme.contrast(c, base) for c in solid) >= 3.0


def test_tab_follows_the_layout(qtbot: QtBot, window: MainWindow) -> None:
    """Tab goes left to right over the chat's top row (☰, model, Options, then ◆ at the right)
    and down the conversations pane (New chat, the project picker, then the filter)."""
    pane = window.conversations
    assert pane.picker is not None
    bar = window.chat_pane.model_bar
    wanted = [
        window.chat_pane.list_toggle,
        bar.picker,
        bar.options_button,
        window.chat_pane.memory_toggle,
        pane.new_button,
        pane.picker,
        pane.filter,
        pane.view,
    ]
    assert all(w.isVisible() and w.isEnabled() for w in wanted)
    window.chat_pane.list_toggle.setFocus(Qt.FocusReason.TabFocusReason)
    qtbot.waitUntil(window.chat_pane.list_toggle.hasFocus)
    reached: list[QWidget] = []
    for _ in range(60):
        widget = QApplication.focusWidget()
        assert isinstance(widget, QWidget)
        reached.append(widget)
        if widget is pane.view:
            break
        qtbot.keyClick(widget, Qt.Key.Key_Tab)
    order = [reached.index(w) for w in wanted if w in reached]
    names = [w.accessibleName() or w.objectName() for w in reached]
    assert len(order) == len(wanted) and order == sorted(order), names
