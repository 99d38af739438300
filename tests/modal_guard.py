"""A test that leaves a modal dialog (or a popup menu) open fails instead of hanging the run.

A dialog's `exec()` runs Qt's event loop in C++: pytest-timeout's signal cannot interrupt it
(its handler waits for Python to run), so a test that forgot to patch a dialog out held the
machine until someone killed the run. While a test runs, a timer looks at the open modal dialog
or popup every `CHECK_MS`; one open for longer than `MODAL_DEADLINE_S` is closed (rejected, so
its `exec()` returns) and the test fails at its end, naming it. A hang guard like
pytest-timeout, not a time limit: no test waits on a dialog anywhere near that long.
`ASSISTANT_TEST_MODAL_DEADLINE_S` sets another deadline (the guard's own test uses 1 s).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator

import pytest

MODAL_DEADLINE_S = float(os.environ.get("ASSISTANT_TEST_MODAL_DEADLINE_S", "30"))
CHECK_MS = 500


@pytest.fixture(autouse=True)
def _modal_dialogs_close() -> Iterator[None]:
    """Close a modal dialog or popup a test left open past the deadline, and fail the test."""
    if "PySide6.QtWidgets" not in sys.modules:  # no Qt in this test (nor before it)
        yield
        return
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication, QDialog, QWidget

    if QApplication.instance() is None:
        yield
        return
    closed: list[str] = []
    seen: list[tuple[QWidget, float]] = []  # the modal widget open, and since when

    def check() -> None:
        widget = QApplication.activeModalWidget() or QApplication.activePopupWidget()
        if widget is None:
            seen.clear()
            return
        if not seen or seen[0][0] is not widget:
            seen[:] = [(widget, time.monotonic())]
            return
        if time.monotonic() - seen[0][1] < MODAL_DEADLINE_S:
            return
        seen.clear()
        closed.append(f"{type(widget).__name__} {widget.windowTitle()!r}")
        if isinstance(widget, QDialog):
            widget.done(int(QDialog.DialogCode.Rejected))  # its exec() returns
        else:
            widget.close()

    timer = QTimer()
    timer.setInterval(CHECK_MS)
    timer.timeout.connect(check)
    timer.start()
    try:
        yield
    finally:
        timer.stop()
    if closed:
        pytest.fail(
            f"The test left a modal dialog open for more than {MODAL_DEADLINE_S:g} s "
            f"({', '.join(closed)}); it was closed. Patch the dialog out (see STYLE.md, 10).",
            pytrace=False,
        )
