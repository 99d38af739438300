"""Check boxes, radio buttons and scroll bars that stand out in any palette (WCAG 2.x non-text
contrast, 3:1), drawn by Qt alone.

Fusion draws the outline of a check box, a radio button or a scroll bar's handle in a shade of
the window colour (darker than the window, so on a dark one all but invisible: 1.2:1; 1.7:1 on
the light theme), and a dark palette's handle just a shade lighter than its groove (1.4:1).
Those widgets paint no window colour of their own, so each class gets a palette of its own
(`QApplication.setPalette(palette, class)`) whose window colour, and for a dark palette's scroll
bars the button colour, is moved towards the text until the control, painted once off screen
and measured, stands out. A Python style could draw the outlines instead, but Qt would call it
for every shape it paints (`tests/test_gui_thread_python.py`).
"""

from __future__ import annotations

from typing import Literal

from PySide6.QtCore import QRect, Qt
from PySide6.QtGui import QColor, QImage, QPalette
from PySide6.QtWidgets import (
    QApplication,
    QCheckBox,
    QRadioButton,
    QScrollBar,
    QStyle,
    QStyleOptionButton,
    QStyleOptionSlider,
    QWidget,
)

from assistant.ui.theme import NON_TEXT, contrast, is_dark, mix

Kind = Literal["indicator", "scroll bar"]
# The widgets given a palette of their own. A list with check boxes takes one itself
# (`outline_checks`): for every item view, every list's frame would change too.
CLASSES: dict[str, Kind] = {
    "QCheckBox": "indicator",
    "QRadioButton": "indicator",
    "QMenu": "indicator",  # a checkable command's box (its frame stands out with it)
    "QScrollBar": "scroll bar",
}
STEPS = 25  # from the palette's colour (0) to the text colour (STEPS)
_Role = QPalette.ColorRole
_found: dict[tuple[Kind, tuple[int, ...]], int] = {}  # the step, by palette


def install(palette: QPalette) -> None:
    """Give the app's check boxes, radio buttons and scroll bars palettes derived from
    `palette` in which they stand out (with Fusion; another style draws its own way)."""
    if not _fusion():
        return
    for class_name, kind in CLASSES.items():  # (a str at run time, bytes in the stubs)
        QApplication.setPalette(standing_out(palette, kind), class_name)  # type: ignore[arg-type]


def outline_checks(view: QWidget) -> None:
    """Give a list with check boxes outlines that stand out (its frame stands out with them)."""
    if _fusion():
        view.setPalette(standing_out(view.palette(), "indicator"))


def standing_out(palette: QPalette, kind: Kind) -> QPalette:
    """`palette`, moved as few steps towards the text as make `kind` stand out on it."""
    key = (kind, tuple(palette.color(role).rgba() for role in _Role if role != _Role.NColorRoles))
    if key not in _found:
        low, high = 0, STEPS  # the text colour itself is the last resort
        while low < high:
            middle = (low + high) // 2
            if measure(kind, palette, moved(palette, kind, middle)) >= NON_TEXT:
                high = middle
            else:
                low = middle + 1
        _found[key] = low
    return moved(palette, kind, _found[key])


def moved(palette: QPalette, kind: Kind, step: int) -> QPalette:
    """`palette` with the colours `kind` is outlined in moved `step` steps towards the text."""
    roles = [_Role.Window]
    if kind == "scroll bar" and is_dark(palette):  # the handle, lighter than the groove
        roles.append(_Role.Button)
    result = QPalette(palette)
    for group in (QPalette.ColorGroup.Active, QPalette.ColorGroup.Inactive):
        text = palette.color(group, _Role.WindowText)
        for role in roles:
            result.setColor(group, role, mix(palette.color(group, role), text, step / STEPS))
    return result


def measure(kind: Kind, palette: QPalette, candidate: QPalette) -> float:
    """How well `kind` drawn in `candidate` stands out on a window in `palette`."""
    if kind == "indicator":
        return indicator_contrast(palette, candidate)
    return handle_contrast(candidate)


def indicator_contrast(palette: QPalette, drawn_in: QPalette) -> float:
    """For the weaker of an unchecked check box and radio button drawn in `drawn_in` on a
    window in `palette`: the best contrast of a pixel of its indicator with both the window
    round it and the base inside it."""
    host = QWidget()
    host.setPalette(palette)
    buttons: list[QCheckBox | QRadioButton] = [QCheckBox(host), QRadioButton(host)]
    for index, button in enumerate(buttons):
        button.setPalette(drawn_in)
        button.setGeometry(24 * index, 0, 24, 24)
    host.resize(24 * len(buttons), 24)
    image = host.grab().toImage()
    host.deleteLater()
    against = (palette.color(_Role.Window), palette.color(_Role.Base))
    return min(
        best_contrast(image, indicator_area(b).translated(b.pos()), against) for b in buttons
    )


def handle_contrast(palette: QPalette) -> float:
    """The best contrast of a pixel of a scroll bar's handle, drawn in `palette`, with its
    groove."""
    bar = QScrollBar(Qt.Orientation.Vertical)
    bar.setPalette(palette)
    bar.setRange(0, 100)
    bar.setPageStep(25)
    bar.resize(bar.sizeHint().width(), 200)
    image = bar.grab().toImage()
    handle, groove = scroll_bar_parts(bar)
    bar.deleteLater()
    return best_contrast(image, handle, (image.pixelColor(groove.center()),))


def indicator_area(button: QCheckBox | QRadioButton) -> QRect:
    """Where `button` draws its box or circle, in its own coordinates."""
    option = QStyleOptionButton()
    button.initStyleOption(option)
    element = (
        QStyle.SubElement.SE_RadioButtonIndicator
        if isinstance(button, QRadioButton)
        else QStyle.SubElement.SE_CheckBoxIndicator
    )
    return button.style().subElementRect(element, option, button)


def scroll_bar_parts(bar: QScrollBar) -> tuple[QRect, QRect]:
    """Where `bar` draws its handle, and its groove after the handle, in its coordinates."""
    option = QStyleOptionSlider()
    bar.initStyleOption(option)
    control, style = QStyle.ComplexControl.CC_ScrollBar, bar.style()
    handle = style.subControlRect(control, option, QStyle.SubControl.SC_ScrollBarSlider, bar)
    groove = style.subControlRect(control, option, QStyle.SubControl.SC_ScrollBarAddPage, bar)
    return handle, groove


def best_contrast(image: QImage, area: QRect, against: tuple[QColor, ...]) -> float:
    """The highest contrast a pixel of `area` has with each colour of `against` at once."""
    inside = area.intersected(image.rect())
    return max(
        (
            min(contrast(image.pixelColor(x, y), colour) for colour in against)
            for x in range(inside.left(), inside.right() + 1)
            for y in range(inside.top(), inside.bottom() + 1)
        ),
        default=1.0,
    )


def _fusion() -> bool:
    app = QApplication.instance()
    return isinstance(app, QApplication) and app.style().name().lower() == "fusion"
