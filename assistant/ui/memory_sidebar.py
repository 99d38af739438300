"""The memory sidebar: long-term memories, the working memory and the conversation's summary."""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any, cast

from PySide6.QtCore import (
    QEvent,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QPoint,
    QPointF,
    QRect,
    QRectF,
    QSize,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import (
    QAction,
    QColor,
    QCursor,
    QFont,
    QFontMetrics,
    QHelpEvent,
    QIcon,
    QKeyEvent,
    QKeySequence,
    QMouseEvent,
    QPainter,
    QPainterPath,
    QPalette,
    QPen,
    QPixmap,
    QResizeEvent,
    QTextLayout,
    QTextOption,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListView,
    QMenu,
    QPushButton,
    QStackedWidget,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTabWidget,
    QTextBrowser,
    QToolButton,
    QToolTip,
    QVBoxLayout,
    QWidget,
)

from assistant.errors import AssistantError
from assistant.memory import (
    KINDS,
    Conversation,
    EmbeddingStatus,
    MemoryChange,
    MemoryItem,
    MemoryKind,
    MemoryState,
    Topic,
    WorkingMemory,
)
from assistant.ui import theme
from assistant.ui.bridge import StoreBridge
from assistant.ui.jobs import Progress, run_job
from assistant.ui.memory_dialogs import MemoryDialog, MemoryValues
from assistant.ui.memory_model import ItemRole, MemoryListModel, caption
from assistant.ui.wording import count, number
from assistant.workspace import Workspace

SEARCH_DELAY_MS = 200
SEARCH_RESULTS = 50
NOTICE_MS = 12_000
MAX_TOPICS = 30

EMPTY_MEMORIES = (
    "No memories yet. Assistant remembers what matters from your conversations "
    "— or add one yourself."
)
EMPTY_WORKING = "No task in progress."
EMPTY_SUMMARY = "No summary yet — it appears when a conversation grows long."

KIND_PLURALS: dict[str, str] = {
    "fact": "Facts",
    "preference": "Preferences",
    "plan": "Plans",
    "decision": "Decisions",
    "task": "Tasks",
    "event": "Events",
    "insight": "Insights",
}
KIND_COLORS: dict[str, str] = {
    "fact": "#3b82f6",
    "preference": "#a855f7",
    "plan": "#14b8a6",
    "decision": "#f97316",
    "task": "#22c55e",
    "event": "#ec4899",
    "insight": "#eab308",
}
TAB_LABELS = ("Memories", "Working memory", "Conversation")
TAB_SHORT_LABELS = ("Memories", "Working", "Conversation")
STATE_LABELS: dict[str, str] = {
    "active": "Active",
    "archived": "Archived",
    "forgotten": "Forgotten",
}


def _pin_path() -> QPainterPath:
    """A push pin drawn in a 24 by 24 box."""
    path = QPainterPath()
    path.moveTo(16, 9)
    path.lineTo(16, 4)
    path.lineTo(17, 4)
    path.quadTo(18, 4, 18, 3)
    path.quadTo(18, 2, 17, 2)
    path.lineTo(7, 2)
    path.quadTo(6, 2, 6, 3)
    path.quadTo(6, 4, 7, 4)
    path.lineTo(8, 4)
    path.lineTo(8, 9)
    path.cubicTo(8, 10.66, 6.66, 12, 5, 12)
    path.lineTo(5, 14)
    path.lineTo(11, 14)
    path.lineTo(11, 21)
    path.lineTo(12, 22)
    path.lineTo(13, 21)
    path.lineTo(13, 14)
    path.lineTo(19, 14)
    path.lineTo(19, 12)
    path.cubicTo(17.34, 12, 16, 10.66, 16, 9)
    path.closeSubpath()
    return path


_PIN = _pin_path()


def _icon(theme: str, draw: Callable[[QPainter], None], color: QColor) -> QIcon:
    """The theme's icon `theme` if there is one, else `draw` on a 16 by 16 canvas in `color`."""
    if QIcon.hasThemeIcon(theme):
        return QIcon.fromTheme(theme)
    pixmap = QPixmap(32, 32)
    pixmap.setDevicePixelRatio(2.0)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    pen = QPen(color, 1.6)
    pen.setCapStyle(Qt.PenCapStyle.RoundCap)
    painter.setPen(pen)
    draw(painter)
    painter.end()
    return QIcon(pixmap)


def _draw_search(painter: QPainter) -> None:
    painter.drawEllipse(QRectF(2.5, 2.5, 8, 8))
    painter.drawLine(QPointF(9.8, 9.8), QPointF(13.5, 13.5))


def _draw_plus(painter: QPainter) -> None:
    painter.drawLine(QPointF(8, 3), QPointF(8, 13))
    painter.drawLine(QPointF(3, 8), QPointF(13, 8))


_WIDE_CAPTION = "preference · importance 0.7 · used 3 days ago"
_LEFT = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
_MOUSE_CLICKS = (
    QEvent.Type.MouseButtonPress,
    QEvent.Type.MouseButtonRelease,
    QEvent.Type.MouseButtonDblClick,
)


class MemoryDelegate(QStyledItemDelegate):
    """Draws a memory as up to three lines of text, a grey caption and a clickable pin."""

    pin_clicked = Signal(str)  # memory id

    MAX_LINES = 3
    H_MARGIN = 12
    V_MARGIN = 9
    PIN_SIZE = 16
    PIN_AREA = 30  # room on the right for the pin
    GAP = 3  # between the text and the caption

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._lines: dict[tuple[str, int, str], list[str]] = {}

    # -- geometry -----------------------------------------------------------------------------

    @staticmethod
    def caption_font(font: QFont) -> QFont:
        """The smaller font of the caption line."""
        small = QFont(font)
        small.setPointSizeF(max(7.0, font.pointSizeF() * 0.85))
        return small

    def _text_width(self, option: QStyleOptionViewItem) -> int:
        width = option.rect.width()
        widget = option.widget
        if width <= 0 and isinstance(widget, QAbstractItemView):
            width = widget.viewport().width()
        return max(40, width - 2 * self.H_MARGIN - self.PIN_AREA)

    def _wrap(self, text: str, font: QFont, width: int) -> list[str]:
        """`text` on at most MAX_LINES lines of `width` pixels, the last one elided."""
        key = (text, width, font.key())
        cached = self._lines.get(key)
        if cached is not None:
            return cached
        flat = " ".join(text.split())
        layout = QTextLayout(flat, font)
        option = QTextOption()
        option.setWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        layout.setTextOption(option)
        spans: list[tuple[int, int]] = []
        layout.beginLayout()
        while len(spans) < self.MAX_LINES:
            line = layout.createLine()
            if not line.isValid():
                break
            line.setLineWidth(width)
            spans.append((line.textStart(), line.textLength()))
        layout.endLayout()
        lines = [flat[start : start + length].rstrip() for start, length in spans] or [""]
        if spans and spans[-1][0] + spans[-1][1] < len(flat):
            rest = flat[spans[-1][0] :]
            lines[-1] = QFontMetrics(font).elidedText(rest, Qt.TextElideMode.ElideRight, width)
        if len(self._lines) > 4000:
            self._lines.clear()
        self._lines[key] = lines
        return lines

    def sizeHint(  # noqa: N802
        self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> QSize:
        """Room for the wrapped text and the caption."""
        font = option.font
        lines = self._wrap(str(index.data()), font, self._text_width(option))
        height = (
            2 * self.V_MARGIN
            + len(lines) * QFontMetrics(font).lineSpacing()
            + self.GAP
            + QFontMetrics(self.caption_font(font)).lineSpacing()
        )
        return QSize(self._text_width(option) + 2 * self.H_MARGIN + self.PIN_AREA, height)

    def pin_rect(self, rect: QRect) -> QRect:
        """Where the pin of a row drawn in `rect` is."""
        size = self.PIN_SIZE
        return QRect(
            rect.right() - self.H_MARGIN - size + 4, rect.top() + self.V_MARGIN, size, size
        )

    # -- painting -----------------------------------------------------------------------------

    def paint(
        self,
        painter: QPainter,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> None:
        """Selection background, text, caption, separator and pin."""
        item = cast(MemoryItem | None, index.data(ItemRole))
        if item is None:
            return
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        opt.text = ""
        widget = opt.widget
        rect = opt.rect
        palette = opt.palette
        selected = bool(opt.state & QStyle.StateFlag.State_Selected)
        group = (
            QPalette.ColorGroup.Active
            if opt.state & QStyle.StateFlag.State_Active
            else QPalette.ColorGroup.Inactive
        )
        text_color = palette.color(
            group, QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text
        )
        muted = QColor(text_color) if selected else theme.muted(palette)
        if selected:
            muted.setAlphaF(0.78)

        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        style = widget.style() if widget is not None else None
        if style is not None:
            style.drawPrimitive(QStyle.PrimitiveElement.PE_PanelItemViewItem, opt, painter, widget)
        if not selected:
            line = QColor(palette.color(QPalette.ColorRole.Text))
            line.setAlphaF(0.09)
            painter.setPen(QPen(line, 1))
            y = rect.bottom()
            painter.drawLine(rect.left() + self.H_MARGIN, y, rect.right() - self.H_MARGIN, y)
        y = self._draw_text(painter, opt, item.text, text_color)
        self._draw_caption(painter, opt, item, y, muted)
        if item.pinned or selected or opt.state & QStyle.StateFlag.State_MouseOver:
            pin = self.pin_rect(rect)
            accent = text_color if selected else palette.color(group, QPalette.ColorRole.Highlight)
            strong = item.pinned or self._under_mouse(widget, pin)
            self._draw_pin(painter, pin, item.pinned, accent if strong else muted)
        painter.restore()

    def _draw_text(
        self, painter: QPainter, opt: QStyleOptionViewItem, text: str, color: QColor
    ) -> int:
        """Draw the wrapped text; returns where the caption goes."""
        font = opt.font
        line_height = QFontMetrics(font).lineSpacing()
        width = self._text_width(opt)
        x, y = opt.rect.left() + self.H_MARGIN, opt.rect.top() + self.V_MARGIN
        painter.setFont(font)
        painter.setPen(color)
        for line in self._wrap(text, font, width):
            painter.drawText(QRect(x, y, width, line_height), _LEFT, line)
            y += line_height
        return y + self.GAP

    def _draw_caption(
        self, painter: QPainter, opt: QStyleOptionViewItem, item: MemoryItem, y: int, color: QColor
    ) -> None:
        """Draw the kind's coloured dot and the grey caption."""
        small = self.caption_font(opt.font)
        metrics = QFontMetrics(small)
        x = opt.rect.left() + self.H_MARGIN
        dot = 6
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(QColor(KIND_COLORS.get(item.kind, "#888888")))
        painter.drawEllipse(QRectF(x + 0.5, y + (metrics.lineSpacing() - dot) / 2, dot, dot))
        width = self._text_width(opt) - dot - 6
        painter.setFont(small)
        painter.setPen(color)
        compact = width < metrics.horizontalAdvance(_WIDE_CAPTION)  # the same form on every row
        text = metrics.elidedText(
            caption(item, compact=compact), Qt.TextElideMode.ElideRight, width
        )
        painter.drawText(QRect(x + dot + 6, y, width, metrics.lineSpacing()), _LEFT, text)

    @staticmethod
    def _under_mouse(widget: QWidget | None, rect: QRect) -> bool:
        if isinstance(widget, QAbstractItemView):
            widget = widget.viewport()
        return widget is not None and rect.contains(widget.mapFromGlobal(QCursor.pos()))

    @staticmethod
    def _draw_pin(painter: QPainter, rect: QRect, filled: bool, color: QColor) -> None:
        painter.save()
        painter.translate(QPointF(rect.topLeft()))
        painter.scale(rect.width() / 24, rect.height() / 24)
        pen = QPen(color, 1.3)
        pen.setCosmetic(True)
        pen.setJoinStyle(Qt.PenJoinStyle.RoundJoin)
        painter.setPen(pen)
        painter.setBrush(color if filled else Qt.BrushStyle.NoBrush)
        painter.drawPath(_PIN)
        painter.restore()

    # -- interaction --------------------------------------------------------------------------

    def _pin_hit(self, option: QStyleOptionViewItem, pos: QPoint) -> bool:
        return self.pin_rect(option.rect).adjusted(-6, -6, 6, 6).contains(pos)

    def editorEvent(  # noqa: N802
        self,
        event: QEvent,
        model: Any,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> bool:
        """A click on the pin toggles it (and does not select the row)."""
        if (
            event.type() in _MOUSE_CLICKS
            and isinstance(event, QMouseEvent)
            and event.button() == Qt.MouseButton.LeftButton
            and self._pin_hit(option, event.position().toPoint())
        ):
            item = cast(MemoryItem | None, index.data(ItemRole))
            if item is not None and event.type() == QEvent.Type.MouseButtonRelease:
                self.pin_clicked.emit(item.id)
            return True
        return super().editorEvent(event, model, option, index)

    def helpEvent(  # noqa: N802
        self,
        event: QHelpEvent,
        view: QAbstractItemView,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> bool:
        """Over the pin, say what a click does."""
        item = cast(MemoryItem | None, index.data(ItemRole))
        if item is not None and self._pin_hit(option, event.pos()):
            tip = "Unpin" if item.pinned else "Pin: always keep this in mind"
            QToolTip.showText(event.globalPos(), tip, view)
            return True
        return super().helpEvent(event, view, option, index)


class NoticeBar(QFrame):
    """A slim inline message with an optional action ("Memory forgotten. Undo")."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("memoryNotice")
        self.label = QLabel(self)
        self.label.setWordWrap(True)
        self.label.setTextFormat(Qt.TextFormat.RichText)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.action_button = QToolButton(self)
        self.action_button.setObjectName("memoryNoticeAction")
        self.action_button.setAccessibleDescription(
            "Does what the notice above offers, such as undoing a forget"
        )
        self.action_button.setAccessibleName("Notice action")
        self.action_button.setAutoRaise(True)
        self.action_button.setCursor(Qt.CursorShape.PointingHandCursor)
        self.action_button.clicked.connect(self._on_action)
        close = QToolButton(self)
        close.setObjectName("memoryNoticeClose")
        close.setAutoRaise(True)
        close.setText("✕")
        close.setToolTip("Dismiss")
        close.setAccessibleName("Dismiss")
        close.setCursor(Qt.CursorShape.PointingHandCursor)
        close.clicked.connect(self.dismiss)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(10, 4, 4, 4)
        layout.setSpacing(4)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.action_button, 0, Qt.AlignmentFlag.AlignVCenter)
        layout.addWidget(close, 0, Qt.AlignmentFlag.AlignVCenter)
        self._callback: Callable[[], object] | None = None
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self.dismiss)
        self._restyle()
        self.hide()

    def _restyle(self) -> None:
        palette = self.palette()
        accent = palette.color(QPalette.ColorRole.Highlight)
        background = theme.mix(palette.color(QPalette.ColorRole.Base), accent, 0.12)
        border = theme.mix(palette.color(QPalette.ColorRole.Base), accent, 0.35)
        self.setStyleSheet(
            f"#memoryNotice {{ background: {background.name()}; border: 1px solid "
            f"{border.name()}; border-radius: 6px; }}"
            f"#memoryNoticeAction {{ color: {accent.name()}; font-weight: 600; "
            f"padding: 2px 6px; }}"
            f"#memoryNoticeClose {{ color: {theme.muted(palette).name()}; padding: 2px 4px; }}"
        )

    def show_notice(
        self,
        text: str,
        action: str | None = None,
        on_action: Callable[[], object] | None = None,
        timeout_ms: int = NOTICE_MS,
        *,
        title: str = "",
    ) -> None:
        """Show `text` under an optional bold `title`, maybe with an `action` button."""
        body = html.escape(text)
        self.label.setText(f"<b>{html.escape(title)}</b><br>{body}" if title else body)
        self._callback = on_action
        self.action_button.setText(action or "")
        self.action_button.setVisible(bool(action))
        self.show()
        if timeout_ms > 0:
            self._timer.start(timeout_ms)
        else:
            self._timer.stop()

    def dismiss(self) -> None:
        """Hide the bar."""
        self._timer.stop()
        self._callback = None
        self.hide()

    def _on_action(self) -> None:
        callback = self._callback
        self.dismiss()
        if callback is not None:
            callback()


class MemorySidebar(QWidget):
    """The right-hand pane: memories (search, filter, pin, edit, forget), working memory, summary.

    Store changes, also those the agent makes on its own thread, arrive through the bridge.
    Calls that may reach the embedding server (add, edit, restore, search) run as jobs.
    """

    source_requested = Signal(str, str)  # conversation id, message id ("" if unknown)

    def __init__(
        self, workspace: Workspace, bridge: StoreBridge, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("memorySidebar")
        self._workspace = workspace
        self._memory = workspace.memory
        self._conversation_id: str | None = None
        self._forgotten: list[str] = []  # undo stack, newest last
        self._search_generation = 0
        self._search_pending = False
        self._query = ""  # the text of the hits shown
        self._explaining = False  # the notice shows why the selected hit ranked where it did

        self.model = MemoryListModel(workspace.memory, self)
        self.delegate = MemoryDelegate(self)
        self.delegate.pin_clicked.connect(self._on_pin_clicked)

        self.tabs = QTabWidget(self)
        self.tabs.setObjectName("memoryTabs")
        self.tabs.setDocumentMode(True)
        self.tabs.tabBar().setExpanding(True)
        self.tabs.setElideMode(Qt.TextElideMode.ElideRight)  # the pane may be narrow
        self.tabs.setUsesScrollButtons(False)
        self.tabs.addTab(self._build_memories_page(), TAB_LABELS[0])
        self.tabs.addTab(self._build_working_page(), TAB_LABELS[1])
        self.tabs.addTab(self._build_conversation_page(), TAB_LABELS[2])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.tabs)

        self._build_actions()
        self.model.modelReset.connect(self._on_rows_changed)
        self.model.rowsInserted.connect(self._on_rows_changed)
        self.model.rowsRemoved.connect(self._on_rows_changed)
        self.list_view.selectionModel().currentChanged.connect(self._on_current_changed)
        # A mouse click makes the row current before it selects it: follow the selection too.
        self.list_view.selectionModel().selectionChanged.connect(self._update_actions)
        self.model.dataChanged.connect(self._update_actions)

        bridge.memory_changed.connect(self._on_memory_changed)
        bridge.working_changed.connect(self._on_working_changed)
        bridge.conversation_changed.connect(self._on_conversation_changed)
        bridge.topics_changed.connect(self._refresh_conversation)

        self._refresh_keyword_note()
        self._on_rows_changed()
        self._refresh_working()
        self._refresh_conversation()

    # -- building -----------------------------------------------------------------------------

    def _build_memories_page(self) -> QWidget:
        page = QWidget(self)
        page.setObjectName("memoriesPage")
        layout = QVBoxLayout(page)
        layout.setContentsMargins(8, 8, 8, 6)
        layout.setSpacing(6)
        self._build_search(page)
        filters = self._build_filters(page)
        frame = self._build_list(page)
        self.notice = NoticeBar(page)
        bar = self._build_bar(page)
        layout.addWidget(self.search)
        layout.addLayout(filters)
        layout.addWidget(self.keyword_note)
        layout.addWidget(frame, 1)
        layout.addWidget(self.notice)
        layout.addLayout(bar)
        return page

    def _build_search(self, page: QWidget) -> None:
        self.search = QLineEdit(page)
        self.search.setObjectName("memorySearch")
        self.search.setAccessibleDescription(
            "Searches long-term memory by keyword and meaning as you type"
        )
        self.search.setPlaceholderText("Search memories")
        self.search.setClearButtonEnabled(True)
        self.search.setAccessibleName("Search memories")
        self.search.addAction(
            _icon("edit-find", _draw_search, theme.muted(self.palette())),
            QLineEdit.ActionPosition.LeadingPosition,
        )
        self._search_timer = QTimer(self)
        self._search_timer.setSingleShot(True)
        self._search_timer.setInterval(SEARCH_DELAY_MS)
        self._search_timer.timeout.connect(self._apply_query)
        self.search.textChanged.connect(self._on_search_text)
        self.search.returnPressed.connect(self._apply_query)

    def _build_filters(self, page: QWidget) -> QHBoxLayout:
        self.kind_filter = QComboBox(page)
        self.kind_filter.setObjectName("memoryKindFilter")
        self.kind_filter.setAccessibleDescription(
            "Shows only memories of one kind: facts, preferences, plans and so on"
        )
        self.kind_filter.setAccessibleName("Kind")
        self.kind_filter.addItem("All kinds", "")  # "", not None: kept out of QVariants
        for kind in KINDS:
            self.kind_filter.addItem(KIND_PLURALS.get(kind, kind.capitalize()), kind)
        self.kind_filter.currentIndexChanged.connect(self._on_filter_changed)

        self.state_filter = QComboBox(page)
        self.state_filter.setObjectName("memoryStateFilter")
        self.state_filter.setAccessibleDescription("Shows active, archived or forgotten memories")
        self.state_filter.setAccessibleName("State")
        for state, label in STATE_LABELS.items():
            self.state_filter.addItem(label, state)
        self.state_filter.setItemData(
            1, "Memories left unused for a long time; never deleted", Qt.ItemDataRole.ToolTipRole
        )
        self.state_filter.setItemData(
            2,
            "Forgotten since Assistant started; erased when it quits",
            Qt.ItemDataRole.ToolTipRole,
        )
        self.state_filter.currentIndexChanged.connect(self._on_filter_changed)
        filters = QHBoxLayout()
        filters.setSpacing(6)
        for combo in (self.kind_filter, self.state_filter):
            combo.setSizeAdjustPolicy(
                QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
            )
            combo.setMinimumContentsLength(6)
        filters.addWidget(self.kind_filter, 1)
        filters.addWidget(self.state_filter, 1)
        return filters

    def _build_list(self, page: QWidget) -> QFrame:
        self.keyword_note = QLabel(page)
        self.keyword_note.setObjectName("memoryKeywordNote")
        self.keyword_note.setWordWrap(True)
        small = self.keyword_note.font()
        small.setPointSizeF(small.pointSizeF() * 0.9)
        self.keyword_note.setFont(small)
        theme.set_muted(self.keyword_note)

        self.list_view = QListView(page)
        self.list_view.setObjectName("memoryList")
        self.list_view.setAccessibleDescription(
            "Your long-term memories, pinned first, then newest first"
        )
        self.list_view.setAccessibleName("Memories")
        # Batched layout, set before the model: rows are measured a batch per event-loop
        # pass, so a store with 10,000 memories does not delay the window.
        self.list_view.setLayoutMode(QListView.LayoutMode.Batched)
        self.list_view.setBatchSize(100)
        self.list_view.setUniformItemSizes(False)
        self.list_view.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.list_view.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list_view.setResizeMode(QListView.ResizeMode.Adjust)
        self.list_view.setItemDelegate(self.delegate)
        self.list_view.setModel(self.model)
        self.list_view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.list_view.setMouseTracking(True)
        self.list_view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.list_view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.list_view.customContextMenuRequested.connect(self._on_context_menu)
        self.list_view.doubleClicked.connect(self._on_double_clicked)

        empty = self._build_empty(page)

        self.list_stack = QStackedWidget(page)
        self.list_stack.addWidget(self.list_view)
        self.list_stack.addWidget(empty)
        frame = QFrame(page)
        frame.setObjectName("memoryListFrame")
        frame.setFrameShape(QFrame.Shape.StyledPanel)
        frame_layout = QVBoxLayout(frame)
        frame_layout.setContentsMargins(1, 1, 1, 1)
        frame_layout.addWidget(self.list_stack)
        self.list_view.setFrameShape(QFrame.Shape.NoFrame)
        return frame

    def _build_empty(self, page: QWidget) -> QWidget:
        self.empty_label = QLabel(page)
        self.empty_label.setObjectName("memoryEmptyState")
        self.empty_label.setWordWrap(True)
        self.empty_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty_label.setTextFormat(Qt.TextFormat.RichText)
        self.empty_label.setContentsMargins(20, 0, 20, 0)
        self.empty_add = QPushButton("Add memory…", page)
        self.empty_add.setObjectName("memoryEmptyAdd")
        self.empty_add.setAccessibleDescription("Adds a memory you write yourself")
        self.empty_add.clicked.connect(self.add_memory_dialog)
        empty = QWidget(page)
        empty.setBackgroundRole(QPalette.ColorRole.Base)  # the list's background
        empty.setAutoFillBackground(True)
        empty_layout = QVBoxLayout(empty)
        empty_layout.setSpacing(14)
        empty_layout.addStretch(2)
        empty_layout.addWidget(self.empty_label)
        empty_layout.addWidget(self.empty_add, 0, Qt.AlignmentFlag.AlignHCenter)
        empty_layout.addStretch(3)
        return empty

    def _build_bar(self, page: QWidget) -> QHBoxLayout:
        self.add_button = QToolButton(page)
        self.add_button.setObjectName("memoryAddButton")
        self.edit_button = QToolButton(page)
        self.edit_button.setObjectName("memoryEditButton")
        self.forget_button = QToolButton(page)
        self.forget_button.setObjectName("memoryForgetButton")
        self.count_label = QLabel(page)
        self.count_label.setObjectName("memoryCount")
        theme.set_muted(self.count_label)
        bar = QHBoxLayout()
        bar.setSpacing(2)
        bar.addWidget(self.add_button)
        bar.addWidget(self.edit_button)
        bar.addWidget(self.forget_button)
        bar.addStretch(1)
        bar.addWidget(self.count_label)
        return bar

    def _build_working_page(self) -> QWidget:
        self.working_view = QTextBrowser(self)
        self.working_view.setObjectName("workingMemoryView")
        self.working_view.setAccessibleDescription(
            "The task, subgoals, notes and results the assistant keeps for this conversation"
        )
        self.working_view.setAccessibleName("Working memory")
        self.working_view.setFrameShape(QFrame.Shape.NoFrame)
        self.working_view.setOpenLinks(False)
        self.working_view.document().setDocumentMargin(14)
        return self.working_view

    def _build_conversation_page(self) -> QWidget:
        self.conversation_view = QTextBrowser(self)
        self.conversation_view.setObjectName("conversationSummaryView")
        self.conversation_view.setAccessibleDescription(
            "The rolling summary of this conversation and its topics"
        )
        self.conversation_view.setAccessibleName("Conversation summary and topics")
        self.conversation_view.setFrameShape(QFrame.Shape.NoFrame)
        self.conversation_view.setOpenLinks(False)
        self.conversation_view.document().setDocumentMargin(14)
        return self.conversation_view

    def _build_actions(self) -> None:
        def action(text: str, slot: Callable[[], object], name: str) -> QAction:
            act = QAction(text, self)
            act.setObjectName(name)
            act.triggered.connect(slot)
            return act

        self.action_pin = action("Pin", self._toggle_pin_selected, "actionMemoryPin")
        self.action_edit = action("Edit…", self.edit_selected, "actionMemoryEdit")
        self.action_forget = action("Forget", self.forget_selected, "actionMemoryForget")
        self.action_restore = action("Restore", self.restore_selected, "actionMemoryRestore")
        self.action_add = action("Add memory…", self.add_memory_dialog, "actionMemoryAdd")
        self.action_source = action("Show source", self.show_source_selected, "actionMemorySource")
        self.action_why = action("Why this result", self.explain_selected, "actionMemoryWhy")
        self.action_undo = action("Undo forget", self.undo_forget, "actionMemoryUndo")
        # The list's event filter handles the keys; these shortcuts only label the menu.
        self.action_forget.setShortcut(QKeySequence(QKeySequence.StandardKey.Delete))
        self.action_undo.setShortcut(QKeySequence(QKeySequence.StandardKey.Undo))
        for act in (self.action_forget, self.action_undo):
            act.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        self.list_view.installEventFilter(self)
        self.add_button.setDefaultAction(self.action_add)
        self.edit_button.setDefaultAction(self.action_edit)
        self.forget_button.setDefaultAction(self.action_forget)
        self.action_add.setIcon(
            _icon("list-add", _draw_plus, self.palette().color(QPalette.ColorRole.ButtonText))
        )
        for button in (self.add_button, self.edit_button, self.forget_button):
            button.setAutoRaise(True)
            button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self._update_actions()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        """Keys on the list: Delete forgets, Enter edits, Undo restores the last forgotten."""
        if watched is not self.list_view or not isinstance(event, QKeyEvent):
            return super().eventFilter(watched, event)
        key = event.key()
        handler: Callable[[], object] | None = None
        if key in (Qt.Key.Key_Delete, Qt.Key.Key_Backspace):
            handler = self.forget_selected
        elif key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            handler = self.edit_selected
        elif event.matches(QKeySequence.StandardKey.Undo):
            handler = self.undo_forget
        if handler is None:
            return False
        if event.type() == QEvent.Type.ShortcutOverride:
            event.accept()  # the list's keys win over window shortcuts while it has focus
            return True
        if event.type() == QEvent.Type.KeyPress:
            handler()
            return True
        return False

    # -- public API ---------------------------------------------------------------------------

    def set_conversation(self, conversation_id: str | None) -> None:
        """Show the working memory and summary of this conversation (None: no conversation)."""
        self._conversation_id = conversation_id
        self._refresh_working()
        self._refresh_conversation()

    def conversation_id(self) -> str | None:
        """The conversation shown in the working memory and conversation pages."""
        return self._conversation_id

    def show_memory(self, memory_id: str) -> bool:
        """Select and reveal a memory, clearing the search or filters that hide it."""
        item = self._memory.get(memory_id)
        if item is None:
            return False
        self.tabs.setCurrentIndex(0)
        if self.model.row_of(memory_id) < 0:
            if self.search.text():
                self.search.clear()
                self._apply_query()
            kind = self.kind_filter.currentData()
            if kind and kind != item.kind:
                self.kind_filter.setCurrentIndex(0)
            if self.model.state != item.state:
                self.state_filter.setCurrentIndex(self.state_filter.findData(item.state))
        return self._select(memory_id)

    def selected_item(self) -> MemoryItem | None:
        """The memory selected in the list, if any."""
        index = self.list_view.currentIndex()
        if not self.list_view.selectionModel().isSelected(index):
            return None
        return self.model.item_at(index)

    def add_memory(self, values: MemoryValues) -> None:
        """Add a memory in the background; it appears (and is selected) when saved."""
        memory = self._memory
        run_job(
            lambda _p: memory.add(values.text, values.kind, values.importance),
            on_done=self._on_added,
            on_error=self._on_job_error,
        )

    def edit_memory(self, memory_id: str, values: MemoryValues) -> None:
        """Change a memory's text, kind and importance in the background."""
        memory = self._memory
        run_job(
            lambda _p: memory.update(
                memory_id, text=values.text, kind=values.kind, importance=values.importance
            ),
            on_done=self._on_saved,
            on_error=self._on_job_error,
        )

    def set_pinned(self, memory_id: str, pinned: bool) -> None:
        """Pin or unpin a memory."""
        try:
            self._memory.pin(memory_id, pinned)
        except (KeyError, AssistantError) as exc:
            self.notice.show_notice(f"Could not change the pin: {exc}")

    def forget_memory(self, memory_id: str) -> None:
        """Forget a memory now, with an Undo that works until the app quits."""
        row = self.model.row_of(memory_id)
        try:
            self._memory.forget(memory_id)
        except (KeyError, AssistantError) as exc:
            self.notice.show_notice(f"Could not forget the memory: {exc}")
            return
        self._forgotten.append(memory_id)
        self._explaining = False
        self.notice.show_notice("Memory forgotten.", "Undo", self.undo_forget)
        self._update_actions()
        if row >= 0 and self.model.rowCount():
            self.list_view.setCurrentIndex(self.model.index(min(row, self.model.rowCount() - 1)))

    def undo_forget(self) -> bool:
        """Restore the most recently forgotten memory that is still forgotten."""
        while self._forgotten:
            memory_id = self._forgotten.pop()
            item = self._memory.get(memory_id)
            if item is not None and item.state == "forgotten":
                self.restore_memory(memory_id)
                self._update_actions()
                return True
        self._update_actions()
        return False

    def restore_memory(self, memory_id: str) -> None:
        """Bring a forgotten or archived memory back, in the background."""
        memory = self._memory
        run_job(
            lambda _p: memory.restore(memory_id),
            on_done=self._on_restored,
            on_error=self._on_job_error,
        )

    # -- actions on the selection -------------------------------------------------------------

    def add_memory_dialog(self) -> None:
        """Ask for a new memory and add it."""
        values = MemoryDialog.ask(self)
        if values is not None:
            self.add_memory(values)

    def edit_selected(self) -> None:
        """Edit the selected memory in a dialog."""
        item = self.selected_item()
        if item is None:
            return
        values = MemoryDialog.ask(self, item)
        if values is not None and values != MemoryValues(item.text, item.kind, item.importance):
            self.edit_memory(item.id, values)

    def forget_selected(self) -> None:
        """Forget the selected memory (Delete)."""
        item = self.selected_item()
        if item is not None and item.state != "forgotten":
            self.forget_memory(item.id)

    def restore_selected(self) -> None:
        """Restore the selected forgotten or archived memory."""
        item = self.selected_item()
        if item is not None and item.state != "active":
            if item.id in self._forgotten:
                self._forgotten.remove(item.id)
            self.restore_memory(item.id)

    def show_source_selected(self) -> None:
        """Ask for the message the selected memory came from."""
        item = self.selected_item()
        if item is not None and item.source is not None:
            self.source_requested.emit(item.source.conversation_id, item.source.message_id or "")

    def explain_selected(self) -> None:
        """Say why the selected search result ranked where it did."""
        hit = self.model.hit_at(self.list_view.currentIndex())
        if hit is not None:
            self.notice.show_notice(hit.why, timeout_ms=0, title="Why this result")
            self._explaining = True

    def _stop_explaining(self) -> None:
        if self._explaining and not self.notice.isHidden():
            self.notice.dismiss()
        self._explaining = False

    def _toggle_pin_selected(self) -> None:
        item = self.selected_item()
        if item is not None:
            self.set_pinned(item.id, not item.pinned)

    # -- slots --------------------------------------------------------------------------------

    def _on_pin_clicked(self, memory_id: str) -> None:
        item = self._memory.get(memory_id)
        if item is not None:
            self.set_pinned(memory_id, not item.pinned)

    def _on_double_clicked(self, index: QModelIndex) -> None:
        if index.isValid():
            self.edit_selected()

    def _on_context_menu(self, pos: QPoint) -> None:
        menu = self.context_menu(pos)
        menu.exec(self.list_view.viewport().mapToGlobal(pos))
        menu.deleteLater()

    def context_menu(self, pos: QPoint) -> QMenu:
        """The menu for a right-click at `pos` in the list (selecting the row under it)."""
        index = self.list_view.indexAt(pos)
        if index.isValid():
            self.list_view.setCurrentIndex(index)
        self._update_actions()
        menu = QMenu(self)
        if index.isValid():
            menu.addAction(self.action_pin)
            menu.addAction(self.action_edit)
            menu.addSeparator()
            if self.action_restore.isEnabled():
                menu.addAction(self.action_restore)
            if self.action_forget.isEnabled():
                menu.addAction(self.action_forget)
            menu.addSeparator()
            menu.addAction(self.action_source)
            menu.addAction(self.action_why)
            menu.addSeparator()
        menu.addAction(self.action_add)
        if self._forgotten:
            menu.addAction(self.action_undo)
        return menu

    def _on_current_changed(self, *_args: object) -> None:
        self._update_actions()
        if self._explaining:  # the explanation follows the selection
            if self.model.hit_at(self.list_view.currentIndex()) is None:
                self._stop_explaining()
            else:
                self.explain_selected()

    def _on_search_text(self, _text: str) -> None:
        self._search_timer.start()

    def _on_filter_changed(self) -> None:
        kind = cast(MemoryKind | None, self.kind_filter.currentData() or None)
        state = cast(MemoryState, self.state_filter.currentData())
        previous = self.model.state
        self.model.set_filter(state, kind)
        if state != previous:
            self._apply_query()
        self._on_rows_changed()

    def _apply_query(self) -> None:
        """Search now: semantic search for active memories, a word filter for the others."""
        self._search_timer.stop()
        self._stop_explaining()
        text = self.search.text().strip()
        self._search_generation += 1
        generation = self._search_generation
        if self.model.state != "active":
            self._search_pending = False
            self.model.clear_hits()
            self.model.set_text_filter(text)
            self._query = text
            self._on_rows_changed()
            return
        self.model.set_text_filter("")
        if not text:
            self._search_pending = False
            self._query = ""
            self.model.clear_hits()
            self._on_rows_changed()
            return
        memory = self._memory
        self._search_pending = True

        def search(_progress: Progress) -> tuple[int, str, object]:
            return generation, text, memory.search(text, k=SEARCH_RESULTS, prefix=True)

        run_job(search, on_done=self._on_search_done, on_error=self._on_search_failed)

    def _on_search_done(self, result: tuple[int, str, Any]) -> None:
        generation, text, hits = result
        if generation != self._search_generation:
            return  # a newer query is on its way
        self._search_pending = False
        self._query = text
        self.model.set_hits(hits)
        self._on_rows_changed()

    def _on_search_failed(self, message: str) -> None:
        self._search_pending = False
        self._explaining = False
        self.notice.show_notice(f"Search failed: {message}")

    def _on_added(self, item: MemoryItem) -> None:
        self.show_memory(item.id)  # clears a search or filter that would hide it

    def _on_saved(self, item: MemoryItem) -> None:
        self._select(item.id)

    def _on_restored(self, item: MemoryItem) -> None:
        self.notice.dismiss()
        self._select(item.id)

    def _on_job_error(self, message: str) -> None:
        self._explaining = False
        self.notice.show_notice(message)

    def _on_memory_changed(self, change: MemoryChange) -> None:
        self.model.on_memory_changed(change)
        if change.kind in ("added", "updated", "embeddings"):
            self._refresh_keyword_note()
        if change.kind in ("added", "updated"):
            self.check_pinned_budget()
        self._update_actions()

    def check_pinned_budget(self) -> None:
        """Warn when the pinned memories alone no longer fit in their share of a prompt."""
        overflow = self._workspace.pinned_overflow()
        if overflow is not None:
            used, allowed = overflow
            self.notice.show_notice(
                f"Pinned memories need about {used:,} tokens, more than the "
                f"{allowed:,} a prompt keeps for memories: the oldest "
                "pinned ones are left out. Unpin some, or raise the prompt budget in Settings.",
                timeout_ms=0,
                title="Too much pinned",
            )

    def _on_working_changed(self, conversation_id: str) -> None:
        if conversation_id == self._conversation_id:
            self._refresh_working()

    def _on_conversation_changed(self, conversation_id: str) -> None:
        if conversation_id == self._conversation_id:
            self._refresh_conversation()

    def _on_rows_changed(self, *_args: object) -> None:
        self._update_empty_state()
        self._update_count()
        self._update_actions()

    # -- refreshing ---------------------------------------------------------------------------

    def _select(self, memory_id: str) -> bool:
        index = self.model.index_of(memory_id)
        if not index.isValid():
            return False
        self.list_view.setCurrentIndex(index)
        self.list_view.scrollTo(index, QAbstractItemView.ScrollHint.EnsureVisible)
        return True

    def _update_actions(self, *_args: object) -> None:
        item = self.selected_item()
        has = item is not None
        self.action_pin.setEnabled(has)
        self.action_pin.setText("Unpin" if item is not None and item.pinned else "Pin")
        self.action_edit.setEnabled(has)
        self.action_forget.setEnabled(item is not None and item.state != "forgotten")
        self.action_restore.setEnabled(item is not None and item.state != "active")
        self.action_source.setEnabled(item is not None and item.source is not None)
        self.action_why.setEnabled(has and self.model.is_searching())
        self.action_undo.setEnabled(bool(self._forgotten))

    def _update_count(self) -> None:
        n = self.model.rowCount()
        if self.model.is_searching() or self._query:
            label = count(n, "result")
        else:
            label = count(n, "memory", "memories")
        self.count_label.setText(label if n else "")
        self._fit_bar()

    def _fit_bar(self) -> None:
        """Shorter tab titles and no count where the pane is too narrow for them."""
        metrics = self.tabs.tabBar().fontMetrics()
        wide = sum(metrics.horizontalAdvance(label) + 28 for label in TAB_LABELS)
        labels = TAB_LABELS if wide <= self.tabs.width() else TAB_SHORT_LABELS
        for n, label in enumerate(labels):
            self.tabs.setTabText(n, label)
        buttons = sum(
            b.sizeHint().width() for b in (self.add_button, self.edit_button, self.forget_button)
        )
        room = self.tabs.width() - 16 - buttons - 12
        self.count_label.setVisible(
            bool(self.count_label.text()) and room >= self.count_label.sizeHint().width()
        )

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802
        """Refit the bottom bar."""
        super().resizeEvent(event)
        self._fit_bar()

    def _update_empty_state(self) -> None:
        if self.model.rowCount():
            self.list_stack.setCurrentIndex(0)
            return
        if self._search_pending:
            return  # keep what is shown until the results arrive
        state, kind = self.model.state, self.model.kind
        show_add = False
        if self._query:
            title, body = "No matches", f"Nothing in memory matches “{self._query}”."
        elif state == "forgotten":
            title = "Nothing forgotten"
            body = "Memories you forget stay here until Assistant quits, so you can restore them."
        elif state == "archived":
            title = "Nothing archived"
            body = "Memories left unused for a long time are archived here. They are never deleted."
        elif kind is not None:
            title = f"No {KIND_PLURALS.get(kind, kind).lower()}"
            body = "Try another kind, or add one yourself."
            show_add = True
        else:
            title, body = EMPTY_MEMORIES.split(". ", 1)
            title += "."
            show_add = True
        muted = theme.muted(self.palette()).name()
        self.empty_label.setText(
            f"<p style='font-size:large; font-weight:600'>{html.escape(title)}</p>"
            f"<p style='color:{muted}'>{html.escape(body)}</p>"
        )
        self.empty_add.setVisible(show_add)
        self.list_stack.setCurrentIndex(1)

    def _refresh_keyword_note(self) -> None:
        note, detail = _keyword_note(self._memory.embedding_status())
        self.keyword_note.setText(note)
        self.keyword_note.setToolTip(detail)
        self.keyword_note.setVisible(bool(note))

    def _refresh_working(self) -> None:
        cid = self._conversation_id
        working = self._workspace.working.get(cid) if cid else WorkingMemory()
        self.working_view.setHtml(working_memory_html(working, self.palette()))

    def _refresh_conversation(self) -> None:
        conversation: Conversation | None = None
        if self._conversation_id:
            try:
                conversation = self._workspace.conversations.load(self._conversation_id)
            except (KeyError, AssistantError):
                conversation = None
        topics = self._workspace.topics.all()[:MAX_TOPICS]
        self.conversation_view.setHtml(
            conversation_html(conversation.summary if conversation else "", topics, self.palette())
        )


def _keyword_note(status: EmbeddingStatus) -> tuple[str, str]:
    """The note under the search field when search cannot use meaning, and its tooltip."""
    if not status.keyword_only:
        return "", ""
    if status.model is None:
        return (
            "Keyword search only: no embedding model is set up.",
            "Set an embedding model in Settings to also find memories by meaning.",
        )
    if status.error is not None:
        # Say what is wrong (unreachable, unusable vectors, ...): the message is the provider's.
        reason = status.error if len(status.error) <= 160 else status.error[:159] + "…"
        return f"Keyword search only. {reason}", status.error
    if status.total == 0:
        return "", ""
    return (
        "Keyword search only until memories are indexed.",
        f"{number(status.embedded)} of {count(status.total, 'memory', 'memories')} have "
        f"embeddings from {status.model}.",
    )


def _css(palette: QPalette) -> dict[str, str]:
    accent = palette.color(QPalette.ColorRole.Highlight)
    base = palette.color(QPalette.ColorRole.Base)
    return {
        "muted": theme.muted(palette).name(),
        "accent": theme.mix(accent, palette.color(QPalette.ColorRole.Text), 0.2).name(),
        "tint": theme.mix(base, accent, 0.13).name(),
        "rule": theme.mix(base, palette.color(QPalette.ColorRole.Text), 0.12).name(),
    }


def _section(title: str, color: str) -> str:
    return (
        f"<p style='margin-top:14px; margin-bottom:4px; color:{color}; font-size:small; "
        f"font-weight:600'>{html.escape(title.upper())}</p>"
    )


def _paragraphs(text: str) -> str:
    return "<br>".join(html.escape(line) for line in text.strip().splitlines())


def _empty(title: str, body: str, muted: str) -> str:
    # A blank first paragraph: QTextDocument ignores the top margin of the first block.
    return (
        "<p style='margin:0'>&nbsp;</p>"
        f"<p align='center' style='margin-top:48px; font-size:large; font-weight:600'>"
        f"{html.escape(title)}</p>"
        f"<p align='center' style='color:{muted}'>{html.escape(body)}</p>"
    )


def working_memory_html(working: WorkingMemory, palette: QPalette) -> str:
    """The working memory as HTML: task, subgoals (current highlighted), notes and results."""
    c = _css(palette)
    if working.is_empty():
        return _empty(
            EMPTY_WORKING,
            "When Assistant works through a multi-step task, its plan and notes show up here.",
            c["muted"],
        )
    parts: list[str] = []
    if working.task:
        parts.append(_section("Task", c["muted"]))
        parts.append(
            f"<p style='font-size:medium; font-weight:600'>{_paragraphs(working.task)}</p>"
        )
    if working.subgoals:
        parts.append(_section("Subgoals", c["muted"]))
        rows = []
        last = len(working.subgoals) - 1
        for n, goal in enumerate(working.subgoals):
            if n == last:
                rows.append(
                    f"<tr><td width='16' bgcolor='{c['tint']}' style='color:{c['accent']}'>●</td>"
                    f"<td bgcolor='{c['tint']}'><b>{_paragraphs(goal)}</b><br>"
                    f"<span style='color:{c['accent']}; font-size:small'>Current step</span>"
                    "</td></tr>"
                )
            else:
                rows.append(
                    f"<tr><td width='16' style='color:{c['muted']}'>○</td>"
                    f"<td style='color:{c['muted']}'>{_paragraphs(goal)}</td></tr>"
                )
        parts.append(
            "<table width='100%' cellspacing='0' cellpadding='4'>" + "".join(rows) + "</table>"
        )
    if working.scratchpad:
        parts.append(_section("Scratchpad", c["muted"]))
        rows = [
            f"<tr><td width='16' style='color:{c['muted']}'>•</td><td>{_paragraphs(note)}</td></tr>"
            for note in working.scratchpad
        ]
        parts.append(
            "<table width='100%' cellspacing='0' cellpadding='4'>" + "".join(rows) + "</table>"
        )
    if working.results:
        parts.append(_section("Results", c["muted"]))
        rows = [
            f"<tr><td style='color:{c['muted']}' width='35%'>{html.escape(name)}</td>"
            f"<td>{_paragraphs(value)}</td></tr>"
            for name, value in working.results.items()
        ]
        parts.append(
            "<table width='100%' cellspacing='0' cellpadding='4'>" + "".join(rows) + "</table>"
        )
    return "".join(parts)


def conversation_html(summary: str, topics: list[Topic], palette: QPalette) -> str:
    """The conversation's rolling summary and the topics, as HTML."""
    c = _css(palette)
    parts = [_section("Summary", c["muted"])]
    if summary.strip():
        parts.append(f"<p>{_paragraphs(summary)}</p>")
    else:
        parts.append(f"<p style='color:{c['muted']}'>{html.escape(EMPTY_SUMMARY)}</p>")
    parts.append(_section("Topics", c["muted"]))
    if not topics:
        parts.append(
            f"<p style='color:{c['muted']}'>No topics yet. Assistant groups related memories "
            "into topics as you talk.</p>"
        )
    for topic in topics:
        parts.append(
            f"<p style='margin-top:8px; margin-bottom:2px; font-weight:600'>"
            f"{html.escape(topic.name.capitalize())}"
            f" <span style='color:{c['muted']}; font-weight:normal; font-size:small'>· "
            f"{count(len(topic.memory_ids), 'memory', 'memories')}"
            f"</span></p>"
        )
        if topic.summary:
            parts.append(f"<p style='margin-top:0'>{_paragraphs(topic.summary)}</p>")
    return "".join(parts)
