"""Crash at every failpoint the workload passes (each one's first, middle and last passage) and
check the data dir after each crash (`make test-reliability`; see `tests.reliability.crashes`)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from tests.reliability.crashes import crash_and_check, crash_points, failpoints


@pytest.mark.timeout(3600)
def test_a_crash_at_any_failpoint_loses_nothing_and_brings_nothing_back(tmp_path: Path) -> None:
    trace = failpoints(tmp_path)
    points = crash_points(trace)
    problems = [p for name, at in points for p in crash_and_check(tmp_path, name, at)]
    kinds = Counter(name.split(".")[0] for name in dict.fromkeys(trace))
    print(
        f"failpoints: {len(set(trace))} over {len(kinds)} kinds of file "
        f"({', '.join(sorted(kinds))}); {len(points)} crashes; {len(problems)} problems"
    )
    assert problems == []
