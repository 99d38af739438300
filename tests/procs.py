"""Steps run in a second process by the reliability tests: `python -m tests.procs STEP DIR ...`.

- `hold-lock DIR`: take the data dir's lock, print `locked`, wait to be killed.
- `add DIR TEXT...`: open the memory store of DIR, add each TEXT, close it.
- `forget DIR TEXT`: forget the memory with that text and close (which compacts the log).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from assistant.datalock import DataDirLock
from assistant.memory.semantic import SemanticMemory
from assistant.paths import memory_dir


def main(argv: list[str]) -> int:
    """Run one step."""
    step, root, args = argv[0], Path(argv[1]), argv[2:]
    if step == "hold-lock":
        DataDirLock(root).acquire()
        print("locked", flush=True)
        time.sleep(3600)
        return 0
    memory = SemanticMemory.open(memory_dir(root))
    if step == "add":
        for text in args:
            memory.add(text)
    elif step == "forget":
        memory.forget(next(i.id for i in memory.all() if i.text == args[0]))
    else:
        raise SystemExit(f"unknown step {step!r}")
    memory.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
