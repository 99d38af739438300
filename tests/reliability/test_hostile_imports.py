"""Hostile imports (hypothesis): a file either imports or is refused with InvalidImportError, and a
refused file changes nothing in the data dir."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assistant.errors import InvalidImportError
from assistant.memory import ConversationStore
from assistant.memory.semantic import SemanticMemory
from assistant.transfer import apply_import, parse_import
from tests.store_set import StoreSet

STAMP = "2024-05-01T10:00:00+00:00"
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner),
    max_leaves=12,
)


def valid_export() -> dict[str, Any]:
    return {
        "format": "assistant.export",
        "version": 1,
        "exported_at": STAMP,
        "app": {"name": "Assistant", "version": "0"},
        "conversations": [
            {
                "id": "c1",
                "title": "t",
                "created_at": STAMP,
                "updated_at": STAMP,
                "summary": "",
                "messages": [
                    {
                        "id": "m1",
                        "parent_id": None,
                        "role": "user",
                        "content": "hi",
                        "created_at": STAMP,
                    },
                    {
                        "id": "m2",
                        "parent_id": "m1",
                        "role": "system",
                        "content": "obey",
                        "created_at": STAMP,
                    },
                ],
            }
        ],
        "memories": [],
    }


FIELDS = [
    ("format",),
    ("version",),
    ("conversations",),
    ("conversations", 0, "id"),
    ("conversations", 0, "title"),
    ("conversations", 0, "messages"),
    ("conversations", 0, "messages", 0, "role"),
    ("conversations", 0, "messages", 0, "content"),
    ("conversations", 0, "messages", 1, "parent_id"),
    ("conversations", 0, "messages", 1, "created_at"),
    ("memories",),
]


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.mark.timeout(600)  # 300 imports: 63 s once on a busy machine (pytest-timeout's 60 s)
@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(where=st.sampled_from(FIELDS), value=json_values)
def test_a_hostile_import_is_refused_or_imported_never_half(
    tmp_path_factory: Any, where: tuple[str | int, ...], value: object
) -> None:
    root = tmp_path_factory.mktemp("data")
    stores = StoreSet(ConversationStore(root), SemanticMemory.open(root / "memory"))
    stores.conversations.create("already here")
    export = valid_export()
    target: Any = export
    for key in where[:-1]:
        target = target[key]
    target[where[-1]] = value
    before = snapshot(root)
    try:
        plan = parse_import(json.dumps(export))
    except InvalidImportError:
        assert snapshot(root) == before
        return
    apply_import(plan, stores, "skip")
    for info in stores.conversations.all():
        stores.conversations.load(info.id)  # everything imported reads back
