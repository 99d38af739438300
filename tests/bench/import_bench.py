"""Benchmark of importing a large ChatGPT export: time and peak memory of `assistant import`.

Run as `python -m tests.bench.import_bench` (`make bench`). It writes a synthetic export of about
100 MB (2,000 conversations, 100,000 messages; `tests/data/exports.py` makes the conversations)
as one `conversations.json` and as the 2026 sharded zip, then imports each into a fresh data
dir with `python -m assistant import` in a subprocess, whose peak RSS is read from
`getrusage(RUSAGE_CHILDREN)` (each run in its own measuring child). A re-import of the same
file (everything already there) is timed too. The goal is a peak RSS of at most twice the
largest conversation file.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import ijson

from tests.data.exports import chatgpt_conversation

CONVERSATIONS = 2_000
TURNS = 25  # user/assistant pairs: 50 messages a conversation, 100,000 in all
PER_SHARD = 100


def write_export(folder: Path, conversations: int, turns: int) -> tuple[Path, Path]:
    """conversations.json and a sharded zip of the same conversations, written as a stream."""
    rng = random.Random(18)
    single = folder / "conversations.json"
    shards: list[bytes] = []
    current: list[bytes] = []
    with single.open("wb") as out:
        out.write(b"[")
        for n in range(conversations):
            data = json.dumps(chatgpt_conversation(n, turns, rng), ensure_ascii=False).encode()
            out.write((b", " if n else b"") + data)
            current.append(data)
            if len(current) == PER_SHARD:
                shards.append(b"[" + b", ".join(current) + b"]")
                current = []
        out.write(b"]")
    if current:
        shards.append(b"[" + b", ".join(current) + b"]")
    archive = folder / "export.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as z:
        z.writestr("export_manifest.json", b"{}")
        for i, shard in enumerate(shards):
            z.writestr(f"conversations-{i:03d}.json", shard)
        z.writestr("chat.html", b"<html></html>")
    return single, archive


def measure(arguments: list[str], data_dir: Path) -> dict[str, float]:
    """Run `python ARGUMENTS` in a child that reports its own child's time and peak RSS."""
    code = (
        "import resource, subprocess, sys, time, json\n"
        "t = time.perf_counter()\n"
        "r = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
        "s = time.perf_counter() - t\n"
        "rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
        "print(json.dumps({'seconds': s, 'rss_kb': rss, 'rc': r.returncode, "
        "'out': r.stdout, 'err': r.stderr}))\n"
    )
    env = {
        **os.environ,
        "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring",
        "ASSISTANT_DATA_DIR": str(data_dir),
    }
    command = [sys.executable, *arguments]
    result = subprocess.run(
        [sys.executable, "-c", code, *command],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    report = json.loads(result.stdout)
    if report["rc"] != 0:
        raise SystemExit(f"{arguments} failed: {report['err']}")
    return {"seconds": report["seconds"], "rss_mb": report["rss_kb"] / 1024, "out": report["out"]}


def _import(source: Path) -> list[str]:
    return ["-m", "assistant", "import", str(source)]


def main() -> None:
    """Write the export, import it three ways, print a Markdown table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--conversations", type=int, default=CONVERSATIONS)
    parser.add_argument("--turns", type=int, default=TURNS)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="import-bench-") as tmp:
        folder = Path(tmp)
        started = time.perf_counter()
        single, archive = write_export(folder, args.conversations, args.turns)
        size = single.stat().st_size
        with zipfile.ZipFile(archive) as z:
            largest_shard = max(i.file_size for i in z.infolist())
        print(
            f"Export: {args.conversations:,} conversations, "
            f"{args.conversations * args.turns * 2:,} messages; conversations.json "
            f"{size / 1e6:.0f} MB, zip {archive.stat().st_size / 1e6:.0f} MB "
            f"(largest shard {largest_shard / 1e6:.1f} MB); written in "
            f"{time.perf_counter() - started:.1f} s; ijson backend {ijson.backend}\n"
        )
        preview = (
            "import sys, pathlib, assistant.transfer as t; t.load_import(pathlib.Path(sys.argv[1]))"
        )
        runs = [
            ("baseline: `assistant --version`", ["-m", "assistant", "--version"], folder / "a", 0),
            ("preview only: read and validate", ["-c", preview, str(single)], folder / "a", size),
            ("conversations.json, fresh data dir", _import(single), folder / "a", size),
            ("same file again (all skipped)", _import(single), folder / "a", size),
            ("sharded zip, fresh data dir", _import(archive), folder / "b", largest_shard),
        ]
        print("| run | time | peak RSS | RSS / largest file |")
        print("|---|---:|---:|---:|")
        for label, arguments, data_dir, largest in runs:
            result = measure(arguments, data_dir)
            ratio = f"{result['rss_mb'] * (1 << 20) / largest:.2f}x" if largest else "—"
            print(f"| {label} | {result['seconds']:.1f} s | {result['rss_mb']:.0f} MB | {ratio} |")
        print(f"\nGoal: peak RSS at most 2x the largest file. Last output: {result['out'].strip()}")
        print(f"(this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024} MB)")


if __name__ == "__main__":
    main()
