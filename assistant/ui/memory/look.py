"""The memory sidebar's colours."""

from __future__ import annotations

KIND_COLORS: dict[str, str] = {
    "fact": "#3b82f6",
    "preference": "#a855f7",
    "plan": "#14b8a6",
    "decision": "#f97316",
    "task": "#22c55e",
    "event": "#ec4899",
    "insight": "#eab308",
}
