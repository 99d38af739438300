"""Command line: open the window, `--self-test` for packaging, `--data-dir`, `--version`."""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from assistant import APP_NAME, __version__
from assistant.errors import AssistantError
from assistant.paths import data_dir


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the `assistant` command."""
    parser = argparse.ArgumentParser(
        prog="assistant", description=f"{APP_NAME}: a desktop assistant that remembers."
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument(
        "--data-dir", metavar="DIR", help="keep all data in DIR instead of the user data directory"
    )
    parser.add_argument(
        "--self-test",
        action="store_true",
        help="build the window off-screen, check the data dir, print SELF-TEST OK",
    )
    parser.add_argument(
        "--timing", action="store_true", help="with --self-test: print the time to the window shown"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `assistant` command and of `python -m assistant`."""
    started = time.perf_counter()
    args = build_parser().parse_args(argv)
    try:
        root = data_dir(args.data_dir)
    except OSError as exc:
        print(f"{APP_NAME}: cannot use the data directory: {exc}", file=sys.stderr)
        return 2
    if args.self_test:
        return self_test(root, started, timing=args.timing)
    from assistant.ui.app import run_app

    return run_app(root)


def self_test(root: Path, started: float, *, timing: bool) -> int:
    """Build the main window without a screen, check the data dir is writable, report."""
    if not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    try:
        probe = root / ".self-test"
        probe.write_text("ok", encoding="utf-8")
        probe.unlink()
    except OSError as exc:
        print(f"SELF-TEST FAILED: data directory {root} is not writable: {exc}", file=sys.stderr)
        return 1
    from assistant.ui.app import build_for_self_test

    try:
        shown = build_for_self_test(root)
    except AssistantError as exc:
        print(f"SELF-TEST FAILED: {exc}", file=sys.stderr)
        return 1
    if timing:
        print(f"window shown after {(shown - started) * 1000:.0f} ms")
    print("SELF-TEST OK")
    return 0
