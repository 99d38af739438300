"""The look in one place: light and dark palettes, and colours derived from the palette that
stay readable (WCAG AA, 4.5:1 for text) on it (and, in `outlines.py`, controls whose outline
stands out at 3:1)."""

from __future__ import annotations

from functools import lru_cache

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication, QWidget

THEMES = {"system": "System", "light": "Light", "dark": "Dark"}
AA_TEXT = 4.5
NON_TEXT = 3.0  # WCAG 2.x non-text contrast: the outline of a control against what is round it
DANGER = "#c62828"
OUTLINES_AFTER_MS = 15  # as the window's PAINT_FIRST_MS: once its frame has painted

_Role = QPalette.ColorRole
_LIGHT = {
    _Role.Window: "#f3f3f3",
    _Role.WindowText: "#1b1b1b",
    _Role.Base: "#ffffff",
    _Role.AlternateBase: "#eef1f5",
    _Role.Text: "#1b1b1b",
    _Role.Button: "#e9e9e9",
    _Role.ButtonText: "#1b1b1b",
    _Role.Highlight: "#1f5fbf",
    _Role.HighlightedText: "#ffffff",
    _Role.Link: "#0b57d0",
    _Role.LinkVisited: "#6a3ab2",
    _Role.PlaceholderText: "#616161",
    _Role.ToolTipBase: "#ffffdc",
    _Role.ToolTipText: "#1b1b1b",
    _Role.BrightText: "#ffffff",
    _Role.Light: "#ffffff",
    _Role.Midlight: "#e3e3e3",
    _Role.Mid: "#b8b8b8",
    _Role.Dark: "#9f9f9f",
    _Role.Shadow: "#767676",
}
_DARK = {
    _Role.Window: "#2b2b2b",
    _Role.WindowText: "#e6e6e6",
    _Role.Base: "#1f1f1f",
    _Role.AlternateBase: "#2c2f33",
    _Role.Text: "#e6e6e6",
    _Role.Button: "#383838",
    _Role.ButtonText: "#e6e6e6",
    _Role.Highlight: "#2f65b5",
    _Role.HighlightedText: "#ffffff",
    _Role.Link: "#8ab4f8",
    _Role.LinkVisited: "#c58af9",
    _Role.PlaceholderText: "#a3a3a3",
    _Role.ToolTipBase: "#383838",
    _Role.ToolTipText: "#e6e6e6",
    _Role.BrightText: "#ffffff",
    _Role.Light: "#4a4a4a",
    _Role.Midlight: "#3e3e3e",
    _Role.Mid: "#2f2f2f",
    _Role.Dark: "#1a1a1a",
    _Role.Shadow: "#000000",
}
_DISABLED_TEXT = {"light": "#8a8a8a", "dark": "#8c8c8c"}
_started_with: list[QPalette] = []  # the system palette, kept when a theme first replaces it


def luminance(color: QColor) -> float:
    """Relative luminance (WCAG 2.x)."""

    def channel(value: float) -> float:
        return value / 12.92 if value <= 0.03928 else ((value + 0.055) / 1.055) ** 2.4

    return (
        0.2126 * channel(color.redF())
        + 0.7152 * channel(color.greenF())
        + 0.0722 * channel(color.blueF())
    )


def contrast(a: QColor, b: QColor) -> float:
    """The WCAG contrast ratio of two colours, 1 to 21."""
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def readable(color: QColor, background: QColor, minimum: float = AA_TEXT) -> QColor:
    """`color`, made lighter or darker (keeping its hue) until it reads on `background`."""
    return QColor.fromRgba(_readable(color.rgba(), background.rgba(), minimum))


@lru_cache(maxsize=64)
def _readable(rgba: int, background_rgba: int, minimum: float) -> int:
    color, background = QColor.fromRgba(rgba), QColor.fromRgba(background_rgba)
    toward_white = luminance(background) < 0.5
    hue, saturation = max(color.hslHueF(), 0.0), color.hslSaturationF()
    lightness, alpha = color.lightnessF(), color.alphaF()
    adjusted = QColor(color)
    while contrast(adjusted, background) < minimum and 0.0 < lightness < 1.0:
        lightness = min(1.0, lightness + 0.02) if toward_white else max(0.0, lightness - 0.02)
        adjusted = QColor.fromHslF(hue, saturation, lightness, alpha)
    return adjusted.rgba()


def is_dark(palette: QPalette) -> bool:
    """Whether text is light on dark in this palette."""
    return luminance(palette.color(_Role.Base)) < luminance(palette.color(_Role.Text))


def muted(palette: QPalette) -> QColor:
    """Secondary text (tool lines, labels), readable on the base colour."""
    return readable(palette.color(_Role.PlaceholderText), palette.color(_Role.Base))


def set_muted(widget: QWidget) -> None:
    """Draw a label's text in the muted colour, now and after a change of theme."""
    _follow_palette(widget)
    widget.installEventFilter(_MutedFollower(widget))


def _follow_palette(widget: QWidget) -> None:
    palette = widget.palette()
    wanted = muted(palette)
    if palette.color(_Role.WindowText) != wanted:  # else setting it would only notify again
        palette.setColor(_Role.WindowText, wanted)
        widget.setPalette(palette)


class _MutedFollower(QObject):
    """Keeps its widget's text muted when the palette it inherits changes (a new theme)."""

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt's name)
        if event.type() == QEvent.Type.PaletteChange and isinstance(watched, QWidget):
            _follow_palette(watched)
        return False


def mix(a: QColor, b: QColor, amount: float) -> QColor:
    """`a` moved `amount` (0..1) of the way towards `b`."""
    return QColor.fromRgbF(
        a.redF() + (b.redF() - a.redF()) * amount,
        a.greenF() + (b.greenF() - a.greenF()) * amount,
        a.blueF() + (b.blueF() - a.blueF()) * amount,
    )


def accent(palette: QPalette) -> QColor:
    """Who speaks ("You", "Assistant"): the highlight colour, readable on the base colour."""
    return readable(palette.color(_Role.Highlight), palette.color(_Role.Base))


def danger(palette: QPalette) -> QColor:
    """Errors, readable on the base colour."""
    return readable(QColor(DANGER), palette.color(_Role.Base))


def palette_for(name: str) -> QPalette:
    """The palette of a theme: "light", "dark", or "system" (the one the app started with)."""
    if name not in ("light", "dark"):
        return QPalette(_started_with[0]) if _started_with else QGuiApplication.palette()
    palette = QPalette()
    for role, value in (_DARK if name == "dark" else _LIGHT).items():
        palette.setColor(role, QColor(value))
    for role in (_Role.Text, _Role.WindowText, _Role.ButtonText):
        palette.setColor(QPalette.ColorGroup.Disabled, role, QColor(_DISABLED_TEXT[name]))
    return palette


def apply(name: str, outlines_later: bool = False) -> None:
    """Give the running app the palette of theme `name` (unknown names mean "system"), with
    check boxes, radio buttons and scroll bars that stand out in it (`outlines.py`): at once,
    or, `outlines_later`, after the first paint (at start: the frame shows none of them, and
    working them out before it delayed it 20 ms, 23 -> 43 ms)."""
    from assistant.ui import outlines  # it derives its colours from these

    if not _started_with:
        _started_with.append(QGuiApplication.palette())
    palette = palette_for(name if name in THEMES else "system")
    QApplication.setPalette(palette)
    if outlines_later:
        QTimer.singleShot(OUTLINES_AFTER_MS, lambda: outlines.install(palette))
    else:
        outlines.install(palette)
