"""Accessibility, contrast, shortcuts, numbers and the command line to Qt."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QLocale, Qt
from PySide6.QtGui import QAction, QColor, QKeySequence, QPalette
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QAbstractSlider,
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QLineEdit,
    QPlainTextEdit,
    QScrollBar,
    QTabBar,
    QTextBrowser,
    QTextEdit,
    QWidget,
)
from pytestqt.qtbot import QtBot

from assistant.cli import split_qt_arguments
from assistant.memory import ConversationStore
from assistant.ui import theme
from assistant.ui.window.main_window import MainWindow
from assistant.ui.wording import count
from tests.desktop import configure, new_saved_chat, shown_window
from tests.fake_openai import FakeOpenAI

pytestmark = pytest.mark.gui

INTERACTIVE = (
    QAbstractButton,
    QLineEdit,
    QTextEdit,
    QPlainTextEdit,
    QAbstractItemView,
    QComboBox,
    QAbstractSpinBox,
    QApplication,
    QAbstractSlider,
)
COMPOSITE = (QComboBox, QLineEdit, QAbstractSpinBox)  # their inner parts are theirs to name
Role = QPalette.ColorRole


@pytest.fixture
def window(qtbot: QtBot, data_dir: Path) -> Iterator[MainWindow]:
    win = shown_window(qtbot, data_dir)
    yield win
    win.close()


def _is_part_of_another(widget: QWidget) -> bool:
    parent = widget.parentWidget()
    while parent is not None:
        if isinstance(parent, COMPOSITE):
            return True
        parent = parent.parentWidget()
    if isinstance(widget.parentWidget(), QTabBar):  # its scroll buttons
        return True
    return widget.objectName().startswith("qt_") or isinstance(widget, QScrollBar)


def _name(widget: QWidget) -> str:
    if widget.accessibleName():
        return widget.accessibleName()
    text = widget.text() if isinstance(widget, QAbstractButton) else ""
    return text if any(c.isalnum() for c in text) else ""  # "✕" or "☰" names nothing


def test_every_interactive_widget_is_described(window: MainWindow) -> None:
    """A description, or a tooltip (which Qt gives screen readers as the description)."""
    undescribed = [
        f"{type(w).__name__} {w.objectName()!r} in {type(w.parentWidget()).__name__}"
        for w in window.findChildren(QWidget)
        if isinstance(w, INTERACTIVE)
        and not _is_part_of_another(w)
        and not (w.accessibleDescription() or w.toolTip())
    ]
    assert undescribed == []


def test_every_interactive_widget_has_an_accessible_name(window: MainWindow) -> None:
    nameless = [
        f"{type(w).__name__} {w.objectName()!r} in {type(w.parentWidget()).__name__}"
        for w in window.findChildren(QWidget)
        if isinstance(w, INTERACTIVE) and not _is_part_of_another(w) and not _name(w)
    ]
    tab_bars = [w for w in window.findChildren(QTabBar) if not _is_part_of_another(w)]
    nameless += [
        f"tab {i} of {bar.parentWidget().objectName()}"
        for bar in tab_bars
        for i in range(bar.count())
        if not bar.tabText(i).strip()
    ]
    assert nameless == []
    for name in ("chatView", "chatInput", "conversationList"):
        widget = window.findChild(QWidget, name)
        assert widget is not None and widget.accessibleName() and widget.accessibleDescription()


@pytest.mark.parametrize("name", ["light", "dark"])
def test_theme_colours_meet_wcag_aa(name: str) -> None:
    palette = theme.palette_for(name)
    pairs = {
        "text": (Role.Text, Role.Base),
        "window text": (Role.WindowText, Role.Window),
        "button text": (Role.ButtonText, Role.Button),
        "selected text": (Role.HighlightedText, Role.Highlight),
        "links": (Role.Link, Role.Base),
        "placeholder": (Role.PlaceholderText, Role.Base),
        "tooltips": (Role.ToolTipText, Role.ToolTipBase),
        "code": (Role.Text, Role.AlternateBase),
    }
    low = {
        what: round(theme.contrast(palette.color(fg), palette.color(bg)), 2)
        for what, (fg, bg) in pairs.items()
        if theme.contrast(palette.color(fg), palette.color(bg)) < theme.AA_TEXT
    }
    base = palette.color(Role.Base)
    for what, colour in (
        ("muted", theme.muted(palette)),
        ("speaker", theme.accent(palette)),
        ("error", theme.danger(palette)),
    ):
        if theme.contrast(colour, base) < theme.AA_TEXT:
            low[what] = round(theme.contrast(colour, base), 2)
    assert low == {}
    assert theme.is_dark(palette) == (name == "dark")


def test_derived_colours_are_made_readable_on_any_palette() -> None:
    palette = QPalette()
    palette.setColor(Role.Base, QColor("#323232"))
    palette.setColor(Role.Text, QColor("#eeeeee"))
    palette.setColor(Role.Highlight, QColor("#15539e"))  # 1.7:1 on that base as it is
    assert theme.contrast(QColor("#15539e"), QColor("#323232")) < 2
    assert theme.contrast(theme.accent(palette), QColor("#323232")) >= theme.AA_TEXT


def test_choosing_a_theme_repaints_and_is_remembered(qtbot: QtBot, window: MainWindow) -> None:
    cid = new_saved_chat(qtbot, window)
    window.workspace.conversations.append(cid, "user", "hello")
    window.chat.show_conversation(window.workspace.conversations.load(cid))
    try:
        window.menu.theme_actions["dark"].trigger()
        qtbot.waitUntil(lambda: theme.is_dark(window.chat.palette()))
        assert window.workspace.settings.ui_state["theme"] == "dark"
        header = window.chat.document().begin().begin().fragment().charFormat()
        assert header.foreground().color() == theme.accent(window.chat.palette())
        window.menu.theme_actions["light"].trigger()
        qtbot.waitUntil(lambda: not theme.is_dark(window.chat.palette()))
    finally:
        window.menu.theme_actions["system"].trigger()


def test_muted_labels_follow_a_change_of_theme(qtbot: QtBot, window: MainWindow) -> None:
    """A muted label keeps its own palette: it must not keep the old theme's grey."""
    label = window.sidebar.memories.count_label
    try:
        for name in ("dark", "light"):
            window.menu.theme_actions[name].trigger()
            wanted = theme.muted(QApplication.palette()).name()
            qtbot.waitUntil(lambda w=wanted: label.palette().color(_TEXT).name() == w)
            base = label.palette().color(QPalette.ColorRole.Window)
            assert theme.contrast(label.palette().color(_TEXT), base) >= theme.AA_TEXT
    finally:
        window.menu.theme_actions["system"].trigger()


_TEXT = QPalette.ColorRole.WindowText


def test_the_memory_notice_follows_a_change_of_theme(qtbot: QtBot, window: MainWindow) -> None:
    notice = window.sidebar.memories.notice
    try:
        for name in ("dark", "light"):
            window.menu.theme_actions[name].trigger()
            notice.show_notice("Memory forgotten.")
            accent = QApplication.palette().color(QPalette.ColorRole.Highlight).name()
            assert f"color: {accent}" in notice.styleSheet()
    finally:
        window.menu.theme_actions["system"].trigger()


def test_sidebar_pages_are_drawn_again_in_a_new_theme(qtbot: QtBot, window: MainWindow) -> None:
    """Pages of HTML coloured from the palette: none keeps the old theme's colours (the memory
    detail's hint stayed near-black on the dark base, 1.3:1)."""
    sidebar = window.sidebar
    pages = [
        window.findChild(QWidget, name)
        for name in ("memoryDetail", "workingMemoryView", "conversationSummaryView")
    ]
    assert all(isinstance(page, QTextBrowser) for page in pages)
    try:
        for name in ("dark", "light"):
            window.menu.theme_actions[name].trigger()
            qtbot.waitUntil(lambda n=name: theme.is_dark(sidebar.palette()) == (n == "dark"))
            for page in pages:
                assert isinstance(page, QTextBrowser)
                base = page.palette().color(Role.Base)
                colours = set(re.findall(r"color:\s*(#[0-9a-fA-F]{6})", page.toHtml()))
                assert colours, page.objectName()
                low = {c for c in colours if theme.contrast(QColor(c), base) < theme.AA_TEXT}
                assert low == set(), (name, page.objectName())
    finally:
        window.menu.theme_actions["system"].trigger()


def test_counts_follow_the_locale_and_agree_in_number() -> None:
    previous = QLocale()
    QLocale.setDefault(QLocale(QLocale.Language.English, QLocale.Country.UnitedStates))
    try:
        assert count(1, "memory", "memories") == "1 memory"
        assert count(3012, "memory", "memories") == "3,012 memories"
        assert count(0, "message") == "0 messages"
    finally:
        QLocale.setDefault(previous)


def test_shortcuts_follow_the_platform_and_are_listed(window: MainWindow) -> None:
    menu = window.menu
    assert QKeySequence("Ctrl+,") in menu.settings.shortcuts()
    assert menu.find.shortcut() == QKeySequence(QKeySequence.StandardKey.Find)
    assert menu.new.shortcut() == QKeySequence(QKeySequence.StandardKey.New)
    assert menu.search.shortcut() == QKeySequence("Ctrl+K")
    assert menu.show_conversations.shortcut() == QKeySequence("Ctrl+Shift+L")
    assert menu.show_memory.shortcut() == QKeySequence("Ctrl+Shift+M")
    listed = dict(menu.shortcut_rows())
    for command in ("New Conversation", "Find in Conversation", "Search All Conversations"):
        assert command in listed
    assert "Next Conversation" in listed and "Stop the Reply" in listed
    undo = QKeySequence(QKeySequence.StandardKey.Undo).toString(
        QKeySequence.SequenceFormat.NativeText
    )
    forget = "Forget / undo forgetting the selected memory (in the memory list)"
    assert listed[forget] == f"Del / {undo}"  # the memory list's keys, which no menu shows


@pytest.mark.parametrize("key", [Qt.Key.Key_Backtab, Qt.Key.Key_Tab])
def test_ctrl_shift_tab_goes_to_the_previous_conversation(
    qtbot: QtBot, window: MainWindow, key: Qt.Key
) -> None:
    """X11 sends Ctrl+Shift+Tab as Backtab (or Tab) with Ctrl and Shift; the list names it
    as the keys read, not as Qt's "Backtab"."""
    store = window.workspace.conversations
    ids = []
    for title in ("first", "second"):
        cid = store.create(title).id
        store.append(cid, "user", title)
        ids.append(cid)
    window.conversations.refresh()
    window.conversations.select(ids[0])
    qtbot.waitUntil(lambda: window.conversations.current_id() == ids[0])
    modifiers = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier
    qtbot.keyClick(window.input, key, modifiers)
    qtbot.waitUntil(lambda: window.conversations.current_id() == ids[1])
    listed = dict(window.menu.shortcut_rows())
    assert "Ctrl+Shift+Tab" in listed["Previous Conversation"]
    assert "Backtab" not in " ".join(listed.values())


def test_side_panes_collapse_by_action_and_by_width(window: MainWindow) -> None:
    window.resize(1200, 700)
    window.menu.show_memory.trigger()
    assert not window.sidebar.isVisible()
    window.menu.show_memory.trigger()
    assert window.sidebar.isVisible()
    window.menu.show_conversations.trigger()
    assert not window.conversations.isVisible()
    window.menu.show_conversations.trigger()
    window.resize(700, 500)
    assert not window.sidebar.isVisible() and not window.conversations.isVisible()
    assert window.minimumWidth() <= 640


def test_qt_options_on_the_command_line_reach_qt() -> None:
    ours, qt = split_qt_arguments(
        ["--data-dir", "D", "-style", "fusion", "-reverse", "-platform=offscreen"]
    )
    assert ours == ["--data-dir", "D"]
    assert qt == ["-style", "fusion", "-reverse", "-platform=offscreen"]


@pytest.mark.parametrize("connected", [False, True])
def test_tab_alone_reaches_every_part_of_the_window(
    qtbot: QtBot, data_dir: Path, fake_openai: FakeOpenAI, connected: bool
) -> None:
    """From the message box, Tab goes round the three panes and back (both panes shown, as on
    a screen wide enough for them), and Shift+Tab goes round the other way."""
    if connected:
        configure(data_dir, fake_openai)
        store = ConversationStore(data_dir)
        cid = store.create("Tea").id
        store.append(cid, "user", "I like tea")
        store.append(cid, "assistant", "Noted: **tea**.")
    window = shown_window(qtbot, data_dir)
    window.menu.show_conversations.setChecked(True)
    window.menu.show_memory.setChecked(True)
    window.workspace.memory.add("The user likes tea")  # the memory list, not its empty state
    qtbot.waitUntil(lambda: window.sidebar.memories.model.rowCount() == 1)
    window.activateWindow()
    window.input.setFocus()
    qtbot.waitUntil(window.input.hasFocus)
    wanted = {
        "chatInput",
        "sendButton",
        "newConversationButton",
        "temporaryChatButton",
        "conversationFilter",
        "conversationList",
        "chatView" if connected else "welcomeSettingsButton",  # no model: the welcome
        "memorySearch",
        "memoryKindFilter",
        "memoryStateFilter",
        "memoryTimelineButton",
        "memoryList",
        "memoryAddButton",
    }
    for key in (Qt.Key.Key_Tab, Qt.Key.Key_Backtab):
        reached: list[QWidget] = []
        for _ in range(80):
            widget = QApplication.focusWidget()
            assert widget is not None
            reached.append(widget)
            qtbot.keyClick(widget, key)
            if QApplication.focusWidget() is window.input:
                break
        assert QApplication.focusWidget() is window.input, "the Tab cycle never came back"
        names = {w.objectName() for w in reached}
        assert wanted <= names, wanted - names
        # And every widget shown that takes the focus by Tab, whoever added it (the model
        # picker, the attach button, ...): the keyboard alone reaches it.
        missed = [
            w.objectName() or type(w).__name__
            for w in _tab_focusable(window)
            if w not in reached and w.focusProxy() not in reached
        ]
        assert not missed, missed
    window.close()


def _tab_focusable(window: QWidget) -> list[QWidget]:
    """The widgets of `window` on screen that Tab may stop at (a widget's own parts aside)."""
    return [
        w
        for w in window.findChildren(QWidget)
        if w.focusPolicy() & Qt.FocusPolicy.TabFocus == Qt.FocusPolicy.TabFocus
        and w.isVisibleTo(window)
        and w.isEnabled()
        and w.window() is window
        and not _is_part_of_another(w)
        and w.objectName() != "focusRing"
    ]


def test_no_window_wide_shortcut_is_also_another_actions(window: MainWindow) -> None:
    """Two actions on one key do nothing at all in Qt ("Ambiguous shortcut overload"): the
    conversation list's Archive and the window's Attach were both Ctrl+Shift+A. A key bound
    window-wide belongs to one action; keys local to a widget may repeat across widgets."""
    wide = (Qt.ShortcutContext.WindowShortcut, Qt.ShortcutContext.ApplicationShortcut)
    owners: dict[str, list[tuple[str, bool]]] = {}
    for action in window.findChildren(QAction):
        for key in action.shortcuts():
            owners.setdefault(key.toString(), []).append(
                (action.text(), action.shortcutContext() in wide)
            )
    clashes = {
        key: names
        for key, names in owners.items()
        if len(names) > 1 and any(is_wide for _, is_wide in names)
    }
    assert clashes == {}
    listed = dict(window.menu.shortcut_rows())
    pin = "Pin / archive the selected conversations (in the list)"
    assert listed[pin] == "Ctrl+Shift+P / Ctrl+Shift+E"
