"""Benchmark of the desktop app: cold start to window shown and to ready, opening a long
conversation, and how long the GUI thread stalls during turns. "Shown" is the window's frame on
screen (menus, splitter, input, status bar); "ready" is every pane filled from the data dir,
which is opened off the GUI thread meanwhile. The stall of a whole turn (two tool calls, memory
chips, the curator afterwards) is measured on a quiet machine and with one core kept busy by a
loop the bench starts and stops.

Run as `python -m tests.bench.ui_bench` (`make bench`). A data dir with 10,000 memories and 200
conversations is made once; then each measurement runs in a fresh subprocess (a cold start of
the interpreter, Qt and the app), offscreen, several times, against a bare PySide6 window
measured the same way in the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

MEMORIES = 10_000
CONVERSATIONS = 200
MESSAGES_PER_CONVERSATION = 10
LONG_CONVERSATION = 500
RUNS = 5
GOAL_SECONDS = 1.5
STALL_GOAL_MS = 50
TURN_WHAT = "301 memories"
ROOT = Path(__file__).resolve().parents[2]


def populate(root: Path) -> str:
    """Fill a data dir; returns the id of a 500-message conversation."""
    from assistant.memory import ConversationStore
    from assistant.memory.semantic import SemanticMemory
    from assistant.paths import memory_dir

    memory = SemanticMemory.open(memory_dir(root))
    for i in range(MEMORIES):
        memory.add(f"Memory number {i} about topic {i % 97} and detail {i * 7 % 1013}")
    memory.close()
    store = ConversationStore(root)
    for c in range(CONVERSATIONS):
        cid = store.create(f"Conversation {c}").id
        for m in range(MESSAGES_PER_CONVERSATION // 2):
            store.append(cid, "user", f"Question {m} in conversation {c}?")
            store.append(
                cid, "assistant", f"Answer {m}: **bold**, `code` and a list:\n\n- one\n- two"
            )
    long_id = store.create("A long conversation").id
    for m in range(LONG_CONVERSATION // 2):
        store.append(long_id, "user", f"Question {m}: what about *this* one?")
        store.append(
            long_id,
            "assistant",
            f"## Answer {m}\n\nSome text with **bold** and `code`.\n\n"
            "```python\nprint('hello')\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |",
        )
    store.all()  # writes the listing cache, as a previous session would have
    return long_id


BARE = """
import time, sys
t0 = time.perf_counter()
from PySide6.QtWidgets import QApplication, QMainWindow
app = QApplication(sys.argv[:1])
w = QMainWindow(); w.resize(1280, 800); w.show(); app.processEvents()
print(time.perf_counter() - t0)
"""

APP = """
import time, sys
t0 = time.perf_counter()
from assistant.ui.app import build_for_self_test
from pathlib import Path
shown, ready = build_for_self_test(Path(sys.argv[1]))
print(shown - t0, ready - t0)
"""

LONG = """
import sys, time
from pathlib import Path
from PySide6.QtWidgets import QApplication
app = QApplication(sys.argv[:1])
from assistant.ui.window.main_window import MainWindow
from assistant.workspace import Workspace
w = MainWindow(Workspace.open(Path(sys.argv[1])))
w.show(); app.processEvents()
other = next(c.id for c in w.workspace.conversations.all() if c.id != sys.argv[2])
w.conversations.select(other); app.processEvents()
t0 = time.perf_counter()
w.conversations.select(sys.argv[2]); app.processEvents()
assert "Answer 249" in w.chat.toPlainText()
print(time.perf_counter() - t0)
w.close()
from assistant.ui.shutdown import join_all
join_all()
"""


STALL = """
import json, sys, tempfile
from pathlib import Path
from PySide6.QtCore import QElapsedTimer, QTimer
from PySide6.QtWidgets import QApplication
app = QApplication(sys.argv[:1])
from assistant.paths import settings_file
from assistant.settings import Settings
from assistant.ui.window.main_window import MainWindow
from assistant.workspace import Workspace
from tests.fake_openai import FakeOpenAI, Reply, ToolCall
with FakeOpenAI() as server, tempfile.TemporaryDirectory() as tmp:
    root = Path(tmp)
    Settings(provider="custom", base_url=server.base_url, chat_model="m", embedding_model="e",
             auto_memories=False).save(settings_file(root))
    w = MainWindow(Workspace.open(root)); w.show(); app.processEvents()
    server.enqueue(
        Reply.tool_calls(ToolCall("calculator", json.dumps({"expression": "2**10"})),
                         ToolCall("current_datetime", "{}"), chunk_delay=0.01),
        Reply.text(" ".join(f"token{i}" for i in range(300)), chunk_delay=0.002),
    )
    gaps = []
    clock = QElapsedTimer(); clock.start()
    probe = QTimer(interval=5); probe.timeout.connect(lambda: gaps.append(clock.restart()))
    probe.start()
    w.input.setPlainText("compute and talk"); w.send()
    while not w.send_button.isEnabled():
        app.processEvents()
    probe.stop()
    assert "token299" in w.chat.toPlainText()
    w.close()
print(max(gaps[1:]) / 1000)
"""


TURN = """
import json, sys, tempfile
from pathlib import Path
from PySide6.QtCore import QElapsedTimer, QTimer
from PySide6.QtWidgets import QApplication
app = QApplication(sys.argv[:1])
from assistant.paths import settings_file
from assistant.settings import Settings
from assistant.ui.window.main_window import MainWindow
from assistant.workspace import Workspace
from tests.fake_openai import FakeOpenAI, Reply, ToolCall
with FakeOpenAI() as server, tempfile.TemporaryDirectory() as tmp:
    root = Path(tmp)
    Settings(provider="custom", base_url=server.base_url, chat_model="m", embedding_model="",
             auto_memories=True).save(settings_file(root))
    workspace = Workspace.open(root)
    for i in range(300):
        workspace.memory.add(f"The user's note {i}: a plan about the garden, week {i % 52}")
    workspace.memory.add("The user's favourite colour is teal")
    w = MainWindow(workspace); w.resize(1280, 800); w.show(); app.processEvents()
    w.new_conversation(); app.processEvents()
    upkeep = []
    w.worker.upkeep_changed.connect(upkeep.append)
    remember = {"text": "The user is learning the cello", "kind": "fact"}
    learned = {"memories": [{"kind": "fact", "text": "The user computes powers of two",
                             "importance": 0.6, "topic": "maths"}]}
    server.enqueue(
        Reply.tool_calls(ToolCall("remember", json.dumps(remember)),
                         ToolCall("calculator", json.dumps({"expression": "2**10"})),
                         chunk_delay=0.01),
        Reply.text(" ".join(f"token{i}" for i in range(300)), chunk_delay=0.002),
        json.dumps(learned),
    )
    gaps = []
    clock = QElapsedTimer(); clock.start()
    probe = QTimer(interval=5); probe.timeout.connect(lambda: gaps.append(clock.restart()))
    probe.start()
    w.input.setPlainText("What is my favourite colour? What is 2**10? I am learning the cello.")
    w.send()
    while not (w.send_button.isEnabled() and upkeep and upkeep[-1] == 0):
        app.processEvents()
    probe.stop()
    text = w.chat.toPlainText()
    assert "token299" in text and "Memories used:" in text and "▸ Remembered" in text, text
    assert any(i.text == "The user computes powers of two" for i in w.workspace.memory.all())
    w.close()
print(max(gaps[1:]) / 1000)
"""


def busy_core() -> subprocess.Popen[bytes]:
    """A process that keeps one core busy until it is killed."""
    return subprocess.Popen([sys.executable, "-c", "while True: pass"])


STREAM = """
import sys, tempfile
from pathlib import Path
from PySide6.QtCore import QElapsedTimer, QTimer
from PySide6.QtWidgets import QApplication
app = QApplication(sys.argv[:1])
from assistant.paths import settings_file
from assistant.settings import Settings
from assistant.ui.window.main_window import MainWindow
from assistant.workspace import Workspace
from tests.bench.ui_bench import markdown_reply
from tests.fake_openai import FakeOpenAI, Reply
reply = markdown_reply()
with FakeOpenAI() as server, tempfile.TemporaryDirectory() as tmp:
    root = Path(tmp)
    Settings(provider="custom", base_url=server.base_url, chat_model="m", embedding_model="",
             auto_memories=False, reply_max_tokens=8192).save(settings_file(root))
    w = MainWindow(Workspace.open(root)); w.resize(1280, 800); w.show(); app.processEvents()
    server.enqueue(Reply.text(reply, chunk_delay=0.001))
    gaps = []
    clock = QElapsedTimer(); clock.start()
    probe = QTimer(interval=5); probe.timeout.connect(lambda: gaps.append(clock.restart()))
    probe.start()
    w.input.setPlainText("write a long answer"); w.send()
    while not w.send_button.isEnabled():
        app.processEvents()
    probe.stop()
    assert "Section 41" in w.chat.toPlainText() and "##" not in w.chat.toPlainText()
    w.close()
print(max(gaps[1:]) / 1000)
"""
STREAM_SECTIONS = 42


def markdown_reply(sections: int = STREAM_SECTIONS) -> str:
    """About 4,000 tokens of Markdown: headings, paragraphs, lists, code and tables."""
    parts = []
    for i in range(sections):
        parts.append(
            f"## Section {i}\n\nA paragraph with **bold**, *italic* and `code` that explains "
            f"step {i} in some detail, so that the reply reads like a real answer would.\n\n"
            f"- first point of {i}\n- second point, a little longer\n- third\n\n"
            f"```python\ndef step_{i}(x: int) -> int:\n    total = x * {i}\n"
            f"    for n in range(10):\n        total += n\n    return total\n```\n\n"
            f"| name | value |\n|---|---|\n| a{i} | {i} |\n| b{i} | {i * 2} |\n\n"
        )
    return "".join(parts)


def timed(code: str, *args: str) -> list[float]:
    """The seconds printed by `code` run in a fresh offscreen interpreter."""
    # As on a user's machine, compiled modules are cached (`__pycache__`) from the first launch.
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    out = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        env=env,
    )
    return [float(word) for word in out.stdout.strip().splitlines()[-1].split()]


def main(argv: Sequence[str] | None = None) -> int:
    """Build the data, measure, print a Markdown table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=RUNS)
    parser.add_argument(
        "--only", choices=("start", "turn"), help="only cold start, or only the stall of a turn"
    )
    args = parser.parse_args(argv)
    times: dict[str, list[float]] = {}
    if args.only != "turn":
        times |= _start(args.runs, full=args.only is None)
    if args.only != "start":
        times |= _turns(args.runs, full=args.only is None)
    data = f"{MEMORIES:,} memories, {CONVERSATIONS} conversations"
    names = {
        "bare": "bare PySide6 window shown",
        "app": f"Assistant window shown ({data})",
        "ready": f"Assistant ready: panes filled ({data})",
        "long": f"open a {LONG_CONVERSATION}-message conversation",
        "stall": "GUI thread's longest stall in a streamed turn with two tool calls",
        "turn": f"... with memory chips and the curator after it ({TURN_WHAT}), quiet",
        "turn_busy": f"... with memory chips and the curator after it ({TURN_WHAT}), a core busy",
        "stream": "GUI thread's longest stall while a 4,000-token Markdown reply streams",
    }
    print("| measurement | median s | min s | max s |")
    print("|---|---:|---:|---:|")
    for key, values in times.items():
        print(
            f"| {names[key]} | {statistics.median(values):.3f} | {min(values):.3f} "
            f"| {max(values):.3f} |"
        )
    print()
    if "app" in times:
        ratio = statistics.median(times["app"]) / statistics.median(times["bare"])
        print(
            f"Cold start: window shown in {statistics.median(times['app']):.2f} s "
            f"(goal <= {GOAL_SECONDS} s), {ratio:.1f}x a bare PySide6 window (goal <= 2x); "
            f"ready in {statistics.median(times['ready']):.2f} s."
        )
    if "turn" in times:
        print(
            f"Longest GUI stall during a turn with chips and the curator (goal <= "
            f"{STALL_GOAL_MS} ms): {statistics.median(times['turn']) * 1000:.0f} ms median, "
            f"{max(times['turn']) * 1000:.0f} ms max quiet; "
            f"{statistics.median(times['turn_busy']) * 1000:.0f} ms median, "
            f"{max(times['turn_busy']) * 1000:.0f} ms max with a core busy."
        )
    if "stall" in times:
        print(
            f"Without chips and curator: {max(times['stall']) * 1000:.0f} ms at worst; while a "
            f"4,000-token Markdown reply streams: {max(times['stream']) * 1000:.0f} ms at worst."
        )
    print(json.dumps(times), file=sys.stderr)
    return 0


def _start(runs: int, *, full: bool) -> dict[str, list[float]]:
    """Cold start against a bare window (interleaved, so that both see the same machine), and
    opening a long conversation (`full`)."""
    times: dict[str, list[float]] = {"bare": [], "app": [], "ready": []}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        started = time.perf_counter()
        long_id = populate(root)
        print(f"data made in {time.perf_counter() - started:.1f} s", file=sys.stderr)
        timed(APP, str(root))  # warm the OS file cache and `__pycache__`, as a first launch does
        for _ in range(runs):
            times["bare"].append(timed(BARE)[0])
            shown_s, ready_s = timed(APP, str(root))
            times["app"].append(shown_s)
            times["ready"].append(ready_s)
        if full:
            times["long"] = [timed(LONG, str(root), long_id)[0] for _ in range(runs)]
    return times


def _turns(runs: int, *, full: bool) -> dict[str, list[float]]:
    """The GUI thread's longest stall in turns: with chips and the curator quiet and with a
    core busy; without them and while a long Markdown reply streams (`full`)."""
    times: dict[str, list[float]] = {}
    if full:
        times["stall"] = [timed(STALL)[0] for _ in range(runs)]
    times["turn"] = [timed(TURN)[0] for _ in range(runs)]
    loop = busy_core()
    try:
        times["turn_busy"] = [timed(TURN)[0] for _ in range(runs)]
    finally:
        loop.kill()
        loop.wait()
    if full:
        times["stream"] = [timed(STREAM)[0] for _ in range(runs)]
    return times


if __name__ == "__main__":
    sys.exit(main())
