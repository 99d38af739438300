"""Package faces: `__all__` says what is public, every name resolves, and the face stays lazy."""

from __future__ import annotations

import importlib

import pytest

from tests import child

FACES = ["assistant.agent", "assistant.knowledge", "assistant.memory"]


@pytest.mark.parametrize("name", FACES)
def test_every_public_name_resolves(name: str) -> None:
    face = importlib.import_module(name)
    assert face.__all__, name
    for public in face.__all__:
        assert getattr(face, public) is not None, public
    with pytest.raises(AttributeError):
        face.no_such_name  # noqa: B018


def test_importing_the_agent_face_loads_neither_openai_nor_numpy() -> None:
    code = (
        "import sys\n"
        "import assistant.agent\n"
        "from assistant.agent import AgentEvent, Finished\n"
        "print([m for m in ('openai', 'numpy') if m in sys.modules])\n"
    )
    result = child.python("-c", code)
    assert result.stdout.strip() == "[]", result.stderr


def test_importing_one_store_loads_neither_numpy_nor_the_other_stores() -> None:
    code = (
        "import sys\n"
        "from assistant.memory import WorkingMemoryStore\n"
        "heavy = ('numpy', 'assistant.memory.semantic', 'assistant.memory.conversations')\n"
        "print([m for m in heavy if m in sys.modules])\n"
    )
    result = child.python("-c", code)
    assert result.stdout.strip() == "[]", result.stderr
