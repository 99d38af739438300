"""Command line: open the window, `export` / `import`, `mcp`, `--self-test`, `--data-dir`,
`--version`."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Literal, TextIO

from assistant import APP_NAME, __version__
from assistant.datalock import DataDirLock, DataDirLockedError
from assistant.errors import AssistantError, InvalidImportError
from assistant.fileio import reason, remove_stale_temp_files
from assistant.paths import data_dir

ERROR_PREFIX = "assistant"


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
    # Also accepted after a subcommand; SUPPRESS keeps a value given before it.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--data-dir", metavar="DIR", default=argparse.SUPPRESS, help="as above")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    export = commands.add_parser(
        "export", parents=[common], help="write conversations (and memories) to a JSON file"
    )
    export.add_argument("out", metavar="OUT.json", help="the file to write")
    export.add_argument(
        "--conversation",
        metavar="ID",
        action="append",
        dest="conversations",
        help="export only this conversation (repeatable); default: all",
    )
    export.add_argument(
        "--memories", action="store_true", help="include long-term memories (never secrets)"
    )
    export.add_argument(
        "--attachments",
        action="store_true",
        help="include the files attached to messages and the images tools returned",
    )
    imp = commands.add_parser(
        "import",
        parents=[common],
        help="add conversations and memories from an Assistant, ChatGPT or Claude export",
    )
    imp.add_argument(
        "source",
        metavar="PATH",
        help="an export as delivered: its .zip, its unpacked folder, or a .json file in it",
    )
    imp.add_argument(
        "--on-conflict",
        choices=("skip", "copy"),
        default="skip",
        help="what to do with a conversation that is already here (default: skip); memories "
        "already here are never imported twice",
    )
    imp.add_argument(
        "--projects",
        choices=("merge", "apart"),
        help="a project of the export named as one here: merge the two, or keep them apart "
        "(the imported one named '<name> (imported)'); asked for when there is one",
    )
    mcp = commands.add_parser(
        "mcp",
        parents=[common],
        help="serve your memory to other AI apps over MCP (stdio), through the app if it runs",
    )
    mcp.add_argument(
        "--http",
        metavar="PORT",
        type=_port,
        help="serve over Streamable HTTP on 127.0.0.1:PORT instead (0: any free port), with "
        "the token kept in the data dir's mcp-token",
    )
    return parser


def _port(text: str) -> int:
    """A TCP port number (0: any free one), for argparse."""
    if not text.isdigit() or int(text) > 65535:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}")
    return int(text)


# Qt's own command-line options (QGuiApplication, QApplication): passed on to Qt.
QT_OPTIONS_WITH_VALUE = frozenset(
    "-platform -platformpluginpath -platformtheme -plugin -qmljsdebugger -style -stylesheet "
    "-display -geometry -title -name -session -qwindowgeometry -qwindowtitle -qwindowicon "
    "-screen -font -fn -background -bg -foreground -fg -button -btn -visual".split()
)
QT_FLAGS = frozenset("-reverse -widgetcount -nograb -dograb -sync -graphicssystem".split())


def split_qt_arguments(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """Our arguments, and Qt's (`-style fusion`, `-platform offscreen`, `-reverse`...)."""
    ours: list[str] = []
    qt: list[str] = []
    arguments = list(argv)
    index = 0
    while index < len(arguments):
        arg = arguments[index]
        name = arg.split("=", 1)[0]
        if name in QT_OPTIONS_WITH_VALUE:
            qt.append(arg)
            if "=" not in arg and index + 1 < len(arguments):
                index += 1
                qt.append(arguments[index])
        elif name in QT_FLAGS:
            qt.append(arg)
        else:
            ours.append(arg)
        index += 1
    return ours, qt


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `assistant` command and of `python -m assistant`."""
    started = time.perf_counter()
    ours, qt_arguments = split_qt_arguments(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(ours)
    try:
        root = data_dir(args.data_dir)
    except OSError as exc:
        print(f"{APP_NAME}: cannot use the data directory: {exc}", file=sys.stderr)
        return 2
    if args.command == "export":
        return export_command(
            root, Path(args.out), args.conversations, args.memories, attachments=args.attachments
        )
    if args.command == "import":
        return import_command(root, Path(args.source), args.on_conflict, args.projects)
    if args.command == "mcp":
        from assistant.mcp_server import serve

        serve(root, args.http)
        return 0
    if args.self_test:
        return self_test(root, started, timing=args.timing)
    from assistant.ui.app import run_app

    return run_app(root, qt_arguments)


def export_command(
    root: Path,
    out: Path,
    conversation_ids: Sequence[str] | None,
    memories: bool,
    *,
    attachments: bool = False,
) -> int:
    """`assistant export`: write the export file and say what it holds."""
    from assistant.transfer import export_data, export_summary, write_export
    from assistant.workspace import Workspace

    try:
        with _locked(root):
            stores = Workspace.open(root, embed=False)  # no key needed: the keyring is not read
            try:
                data = export_data(
                    stores,
                    conversation_ids,
                    include_memories=memories,
                    instructions=stores.settings.instructions(),
                    attachments=stores.attachments if attachments else None,
                    memory_policy=stores.settings.policy(),
                )
                write_export(out, data)
            finally:
                stores.close()
    except AssistantError as exc:
        return _fail(exc)
    except OSError as exc:  # a file the core did not name: still one line, no traceback
        return _fail_os(exc)
    print(export_summary(data, out))
    return 0


def import_command(
    root: Path,
    source: Path,
    policy: Literal["skip", "copy"],
    projects: Literal["merge", "apart"] | None = None,
) -> int:
    """`assistant import`: validate the whole export first, then add what is not here yet.

    A project of the export named as another one here needs `projects` (merge or apart): the
    command says so and changes nothing without it. An export's custom instructions are taken
    when this data dir has none, and its memory policy when the one here is the default."""
    from assistant.transfer import apply_import, load_import
    from assistant.workspace import Workspace

    meter = _ProgressLine(sys.stderr) if sys.stderr.isatty() else None
    try:
        try:
            plan = load_import(source, meter.bytes if meter else None)
        except InvalidImportError as exc:  # a bad file changes nothing
            raise InvalidImportError(f"{exc} Nothing was changed.") from None
        if meter:
            meter.done()
        with _locked(root):
            stores = Workspace.open(root, embed=bool(plan.memories))
            try:
                same_names = plan.project_conflicts(stores)
                if same_names and projects is None:
                    names = ", ".join(repr(n) for n in same_names)
                    raise InvalidImportError(
                        f"{source.name} has projects named like projects here ({names}): "
                        "import it again with --projects merge (one project each) or "
                        "--projects apart (the imported ones kept beside them). Nothing was "
                        "changed."
                    )
                result = apply_import(
                    plan,
                    stores,
                    policy,
                    meter.steps if meter else None,
                    projects=projects or "merge",
                    attachments=stores.attachments,
                )
                if plan.instructions is not None and stores.adopt_instructions(plan.instructions):
                    print("Custom instructions set from the export.")
                if (
                    plan.memory_policy is not None
                    and plan.memory_policy != stores.settings.policy()
                ):
                    if stores.adopt_policy(plan.memory_policy):
                        print(
                            f"Memory policy set from the export: {plan.memory_policy.describe()}."
                        )
                    else:
                        print(
                            "The export's memory policy was not taken: this data dir has its own "
                            "(File > Import in the app offers to replace it)."
                        )
            finally:
                stores.close()
                if meter:
                    meter.done()
    except DataDirLockedError as exc:
        return _hand_over_import(root, source, exc)
    except AssistantError as exc:
        if meter:
            meter.done()
        return _fail(exc)
    except OSError as exc:
        return _fail_os(exc)
    print(result.summary())
    for note in (plan.unreadable_note(), *plan.notes):
        if note:
            print(note)
    if plan.suggested_memories:
        print(
            f"The export holds custom instructions ({len(plan.suggested_memories)}); "
            "File > Import in the app offers them as memories."
        )
    return 0


class _ProgressLine:
    """A progress line on a terminal, redrawn in place and erased when done."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._shown = ""

    def bytes(self, done: int, total: int) -> None:
        """Reading: megabytes of the export."""
        self._show(f"Reading {done / 1e6:,.0f} of {total / 1e6:,.0f} MB")

    def steps(self, done: int, total: int) -> None:
        """Importing: conversations and memories."""
        self._show(f"Importing {done:,} of {total:,}")

    def _show(self, text: str) -> None:
        if text != self._shown:
            self._stream.write(f"\r{text}\x1b[K")
            self._stream.flush()
            self._shown = text

    def done(self) -> None:
        """Erase the line."""
        if self._shown:
            self._stream.write("\r\x1b[K")
            self._stream.flush()
            self._shown = ""


@contextlib.contextmanager
def _locked(root: Path) -> Iterator[None]:
    """Hold the data dir's lock (DataDirLockedError if the app has it); tidy what crashes left."""
    with DataDirLock(root):
        remove_stale_temp_files(root)
        yield


def _hand_over_import(root: Path, source: Path, locked: DataDirLockedError) -> int:
    """The app has the data open: ask it to show its import preview, else refuse."""
    from assistant.ui.single_instance import send_request

    if send_request(root, {"action": "import", "path": str(source.resolve())}):
        print(f"{APP_NAME} is open on {root}: the import preview is shown in its window.")
        return 0
    return _fail(locked)


def _fail(exc: AssistantError) -> int:
    print(f"{ERROR_PREFIX}: {exc}", file=sys.stderr)
    return 1


def _fail_os(exc: OSError) -> int:
    where = f" {exc.filename}" if exc.filename else ""
    print(f"{ERROR_PREFIX}: could not use{where}: {reason(exc)}.", file=sys.stderr)
    return 1


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
        with _locked(root):
            shown, ready = build_for_self_test(root)
    except AssistantError as exc:
        print(f"SELF-TEST FAILED: {exc}", file=sys.stderr)
        return 1
    from assistant.ui.chat.code_highlight import highlight

    if not highlight("def f(): return 1", "python", dark=False):  # a bundle without the lexers
        print("SELF-TEST FAILED: code blocks cannot be highlighted", file=sys.stderr)
        return 1
    from assistant.memory import LocalEmbedder

    try:  # a bundle without the model, onnxruntime or the tokenizer would search by keyword only
        meaning = LocalEmbedder(threads=1).embed(["a self-test"])
    except AssistantError as exc:
        print(f"SELF-TEST FAILED: {exc}", file=sys.stderr)
        return 1
    if not abs(float((meaning**2).sum()) - 1.0) < 1e-3:
        print("SELF-TEST FAILED: the built-in embedder gives no unit vector", file=sys.stderr)
        return 1
    if timing:
        from assistant.credentials import Credentials, backend_name
        from assistant.resources import app_icon_files, resources_root

        print(f"window shown after {(shown - started) * 1000:.0f} ms")
        print(f"window ready after {(ready - started) * 1000:.0f} ms")
        # What a packaged build resolved: data dir, resources, keyring and key (never shown).
        print(f"data dir: {root}")
        print(f"resources: {resources_root()} ({len(app_icon_files())} icon sizes)")
        key = "found" if Credentials().api_key() else "none"
        print(f"keyring backend: {backend_name()} (API key: {key})")
    print("SELF-TEST OK")
    return 0
