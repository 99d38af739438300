"""Create the QApplication and the main window."""

from __future__ import annotations

import logging
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import QEventLoop, QTimer
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication, QMessageBox

from assistant import APP_NAME, __version__
from assistant.datalock import DataDirLock, DataDirLockedError
from assistant.errors import AssistantError, StorageError
from assistant.fileio import remove_stale_temp_files
from assistant.resources import app_icon_files
from assistant.ui.jobs import run_job
from assistant.ui.shutdown import QUIT_GRACE_S, join_all
from assistant.ui.single_instance import NOT_READY, InstanceServer, MemoryRequest, send_request
from assistant.ui.system_libraries import explain, missing_libraries, uses_xcb
from assistant.ui.window.main_window import MainWindow

log = logging.getLogger(__name__)

LOCK_WAIT_S = 30.0  # for a process that holds the data dir briefly (`assistant mcp`, a request)


def _application(qt_arguments: Sequence[str] = ()) -> QApplication:
    app = QApplication.instance()
    if isinstance(app, QApplication):
        return app
    app = QApplication([sys.argv[0], *qt_arguments])
    app.setApplicationName(APP_NAME)
    app.setApplicationDisplayName(APP_NAME)
    app.setApplicationVersion(__version__)
    app.setDesktopFileName("assistant")
    app.setWindowIcon(app_icon())
    return app


def app_icon() -> QIcon:
    """The application icon at every size it was rendered at (null if the files are missing)."""
    icon = QIcon()
    for path in app_icon_files():
        icon.addFile(str(path))
    return icon


def run_app(root: Path, qt_arguments: Sequence[str] = ()) -> int:
    """Show the main window on `root` and run the event loop until it closes.

    The data dir's lock is held until the process ends. If another instance holds it, that one
    is asked to come to the front instead; if it does not answer, the lock is waited for a
    while (`assistant mcp` holds it for one request at a time), then the user is told why.
    `qt_arguments` are Qt's own options from the command line (`-style fusion`...).
    """
    if uses_xcb(os.environ, qt_arguments) and (missing := missing_libraries()):
        print(explain(missing), file=sys.stderr)  # Qt would abort with a generic message
        return 1
    app = _application(qt_arguments)
    lock = DataDirLock(root)
    try:
        lock.acquire()
    except DataDirLockedError:
        if send_request(root, {"action": "activate"}):
            return 0
        try:
            lock.acquire(wait_s=LOCK_WAIT_S)
        except StorageError as exc:  # still held (DataDirLockedError says by whom)
            QMessageBox.critical(None, APP_NAME, str(exc))
            return 1
    except StorageError as exc:
        QMessageBox.critical(None, APP_NAME, f"Could not open your data in {root}:\n\n{exc}")
        return 1
    remove_stale_temp_files(root)
    window = MainWindow()
    server = instance_server(window, root)

    def cannot_open(message: str) -> None:
        QMessageBox.critical(window, APP_NAME, f"Could not open your data in {root}:\n\n{message}")
        window.close()
        app.exit(1)

    window.open_failed.connect(cannot_open)
    window.open_workspace(root)
    window.show()
    try:
        code = app.exec()
        # No thread may outlive the application, nor write after the lock is gone.
        if not join_all(QUIT_GRACE_S):
            server.close()
            _end_now(code)
        return code
    finally:
        server.close()
        lock.release()


def _end_now(code: int) -> None:
    """End the process at once: background work that did not stop must not keep it (and the
    data dir's lock) alive. What it saved is consistent at any moment, as after a crash; the
    lock is the kernel's to release, and the work resumes at the next start."""
    log.warning("Background work did not stop; quitting without waiting for it")
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def instance_server(window: MainWindow, root: Path) -> InstanceServer:
    """The window's local socket, where later starts, `assistant import` and `assistant mcp`
    reach it."""
    server = InstanceServer(window)
    server.activate.connect(lambda: _bring_to_front(window))
    server.import_file.connect(window.import_path)
    server.memory_handler = lambda request: _serve_memory(window, request)
    if not server.listen(root):
        log.warning("A second start cannot hand over to this window: no local socket")
    return server


def _serve_memory(window: MainWindow, request: MemoryRequest) -> None:
    """Run a memory request of `assistant mcp` on the thread pool; reply on the GUI thread."""
    if not window.is_ready():
        request.reply(NOT_READY)
        return
    worker = window.worker
    run_job(
        lambda _progress: worker.answer(request.payload),
        on_done=request.reply,
        on_error=lambda message: request.reply({"ok": False, "error": message}),
    )


def _bring_to_front(window: MainWindow) -> None:
    if window.isMinimized():
        window.showNormal()
    window.show()
    window.raise_()
    window.activateWindow()


def build_for_self_test(root: Path, timeout_s: float = 60) -> tuple[float, float]:
    """Show the window, wait until its panes are filled, close it.

    Returns the `time.perf_counter()` at which the window was shown and at which it was ready;
    raises AssistantError if the data could not be opened.
    """
    app = _application()
    window = MainWindow()
    failures: list[str] = []
    wait = QEventLoop()
    window.open_failed.connect(failures.append)
    window.open_failed.connect(wait.quit)
    window.ready.connect(wait.quit)
    QTimer.singleShot(int(timeout_s * 1000), wait.quit)
    window.open_workspace(root)
    window.show()
    app.processEvents()
    shown = time.perf_counter()
    if not (window.is_ready() or failures):
        wait.exec()
    ready = time.perf_counter()
    window.close()
    app.processEvents()
    join_all()
    if failures or not window.is_ready():
        raise AssistantError(failures[0] if failures else "the window never became ready")
    return shown, ready
