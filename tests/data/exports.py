"""Synthetic ChatGPT and Claude exports shaped like real ones (no real user data).

`python -m tests.data.exports` writes the fixtures of `tests/data/exports/`; a test checks that
the committed files are what this script writes. The bench (`tests/bench/import_bench.py`)
builds its large export from `chatgpt_conversation` too.

ChatGPT's shape: a list of conversations, each a `mapping` of nodes (`parent`, `children`,
`message`) and the `current_node` the user last saw; since 2026 the zip holds shards
`conversations-000.json`, … beside `export_manifest.json`, `user.json`, `chat.html` and media.
Claude's: a list of conversations with `chat_messages` (`sender`, `content` parts, attachments
with their extracted text).
"""

from __future__ import annotations

import io
import json
import random
import zipfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent / "exports"
T0 = 1_767_225_600.0  # 2026-01-01T00:00:00Z
ZIP_TIME = (2026, 1, 2, 3, 4, 5)
CITE = "\ue200cite\ue202turn0search0\ue202turn0search1\ue201"
ENTITY = '\ue200entity\ue202["city", "Porto", "city in Portugal"]\ue201'
PROFILE = (
    "The user provided the following information about themselves. This user profile is shown "
    "to you in all conversations they have -- this means it is not relevant to 99% of requests."
    "\nUser profile:\n```I live in Porto and work as a nurse on night shifts.```"
)
INSTRUCTIONS = (
    "The user provided the additional info about how they would like you to respond:\n"
    "```Answer briefly, in British English.```"
)


def node(
    node_id: str,
    parent: str | None,
    role: str | None = None,
    *,
    parts: Sequence[Any] = (),
    at: float | None = None,
    content: dict[str, Any] | None = None,
    metadata: dict[str, Any] | None = None,
    recipient: str = "all",
    author_name: str | None = None,
) -> dict[str, Any]:
    """A mapping node; `children` are filled in by `conversation`."""
    message = None
    if role is not None:
        message = {
            "id": node_id,
            "author": {"role": role, "name": author_name, "metadata": {}},
            "create_time": at,
            "update_time": None,
            "content": content or {"content_type": "text", "parts": list(parts)},
            "status": "finished_successfully",
            "end_turn": True,
            "weight": 1.0,
            "metadata": metadata or {},
            "recipient": recipient,
            "channel": None,
        }
    return {"id": node_id, "message": message, "parent": parent, "children": []}


def conversation(
    cid: str,
    title: str | None,
    nodes: Sequence[dict[str, Any]],
    *,
    current: str | None = None,
    created: float | None = T0,
    updated: float | None = T0 + 600,
    **extra: Any,
) -> dict[str, Any]:
    """A ChatGPT conversation of these nodes (children derived from parents)."""
    mapping = {n["id"]: n for n in nodes}
    for n in nodes:
        if n["parent"] in mapping:
            mapping[n["parent"]]["children"].append(n["id"])
    return {
        "title": title,
        "create_time": created,
        "update_time": updated,
        "mapping": mapping,
        "moderation_results": [],
        "current_node": current if current is not None else nodes[-1]["id"],
        "plugin_ids": None,
        "conversation_id": cid,
        "conversation_template_id": None,
        "gizmo_id": None,
        "is_archived": False,
        "safe_urls": [],
        "default_model_slug": "gpt-5",
        "id": cid,
        **extra,
    }


def _root(first: str) -> list[dict[str, Any]]:
    """The hidden root and system nodes every conversation starts with."""
    return [
        node("client-created-root", None),
        node(
            f"{first}-sys",
            "client-created-root",
            "system",
            parts=[""],
            metadata={"is_visually_hidden_from_conversation": True},
        ),
    ]


def cid(n: int) -> str:
    """A ChatGPT-style conversation id."""
    return f"68a1c2f3-0000-4000-8000-{n:012d}"


def realistic() -> list[dict[str, Any]]:
    """Seven conversations with what real exports hold: branches, custom instructions, browsing
    with citations, voice, images and files, canvas, code and thoughts, do-not-remember, and a
    conversation without any time."""
    edited = [
        *_root("a"),
        node(
            "a-ctx",
            "a-sys",
            "user",
            content={
                "content_type": "user_editable_context",
                "user_profile": PROFILE,
                "user_instructions": INSTRUCTIONS,
            },
            metadata={"is_visually_hidden_from_conversation": True, "is_user_system_message": True},
        ),
        node("a-u1", "a-ctx", "user", parts=["Best time to visit Lisbon?"], at=T0 + 10),
        node("a-a1", "a-u1", "assistant", parts=["Spring."], at=T0 + 12),
        node("a-u1b", "a-ctx", "user", parts=["Best time to visit Lisbon in 2026?"], at=T0 + 60),
        node(
            "a-call",
            "a-u1b",
            "assistant",
            content={"content_type": "code", "language": "unknown", "text": 'search("Lisbon")'},
            at=T0 + 61,
            recipient="web.run",
        ),
        node(
            "a-tool",
            "a-call",
            "tool",
            content={"content_type": "tether_browsing_display", "result": "…", "summary": ""},
            at=T0 + 62,
            author_name="web.run",
        ),
        node(
            "a-thoughts",
            "a-tool",
            "assistant",
            content={"content_type": "thoughts", "thoughts": [{"summary": "x", "content": "y"}]},
            at=T0 + 63,
            metadata={"reasoning_status": "is_reasoning"},
        ),
        node(
            "a-a1b",
            "a-thoughts",
            "assistant",
            parts=[f"April to June, when {ENTITY} and Lisbon are mild {CITE}."],
            at=T0 + 64,
            metadata={
                "content_references": [
                    {
                        "matched_text": CITE,
                        "type": "grouped_webpages",
                        "items": [
                            {"title": "Visit Lisboa", "url": "https://www.visitlisboa.com/"},
                            {"title": "Lisbon weather", "url": "https://example.org/weather"},
                        ],
                        "alt": "([Visit Lisboa](https://www.visitlisboa.com/))",
                    }
                ]
            },
        ),
    ]
    voice = [
        *_root("b"),
        node(
            "b-u1",
            "b-sys",
            "user",
            content={
                "content_type": "multimodal_text",
                "parts": [
                    {
                        "content_type": "audio_transcription",
                        "text": "Remind me how long to boil an egg.",
                        "direction": "in",
                    },
                    {
                        "content_type": "audio_asset_pointer",
                        "asset_pointer": "sediment://file_voice1",
                        "size_bytes": 48000,
                        "format": "wav",
                    },
                ],
            },
            at=T0 + 100,
            metadata={"voice_mode_message": True},
        ),
        node(
            "b-a1",
            "b-u1",
            "assistant",
            content={
                "content_type": "multimodal_text",
                "parts": [
                    {
                        "content_type": "audio_transcription",
                        "text": "About nine minutes for a hard-boiled egg.",
                        "direction": "out",
                    },
                    {
                        "content_type": "audio_asset_pointer",
                        "asset_pointer": "sediment://file_voice2",
                        "size_bytes": 96000,
                        "format": "wav",
                    },
                ],
            },
            at=T0 + 104,
        ),
    ]
    pictures = [
        *_root("c"),
        node(
            "c-u1",
            "c-sys",
            "user",
            content={
                "content_type": "multimodal_text",
                "parts": [
                    {
                        "content_type": "image_asset_pointer",
                        "asset_pointer": "file-service://file-Robin01",
                        "width": 800,
                        "height": 600,
                        "size_bytes": 81234,
                    }
                ],
            },
            at=T0 + 200,
            metadata={
                "attachments": [
                    {
                        "id": "file-Robin01",
                        "name": "robin.jpg",
                        "mime_type": "image/jpeg",
                        "size": 81234,
                    }
                ]
            },
        ),
        node("c-a1", "c-u1", "assistant", parts=["That is a European robin."], at=T0 + 205),
        node(
            "c-u2",
            "c-a1",
            "user",
            parts=["Summarise this report and draw a robin."],
            at=T0 + 300,
            metadata={
                "attachments": [
                    {"id": "file-Rep02", "name": "report.pdf", "mime_type": "application/pdf"}
                ]
            },
        ),
        node(
            "c-gen",
            "c-u2",
            "tool",
            content={
                "content_type": "multimodal_text",
                "parts": [
                    {
                        "content_type": "image_asset_pointer",
                        "asset_pointer": "sediment://file_gen03",
                        "metadata": {"dalle": {"prompt": "a robin"}},
                    }
                ],
            },
            at=T0 + 310,
            author_name="t2uay3k.sj1i4kz",
        ),
        node(
            "c-a2", "c-gen", "assistant", parts=["The report says birds sing at dawn."], at=T0 + 311
        ),
    ]
    canvas = [
        *_root("d"),
        node("d-u1", "d-sys", "user", parts=["Write a haiku in a canvas."], at=T0 + 400),
        node(
            "d-doc",
            "d-u1",
            "assistant",
            content={
                "content_type": "code",
                "language": "json",
                "text": json.dumps(
                    {"name": "Haiku", "type": "document", "content": "Old pond\nfrog leaps in"}
                ),
            },
            at=T0 + 401,
            recipient="canmore.create_textdoc",
        ),
        node(
            "d-tool",
            "d-doc",
            "tool",
            parts=["Successfully created text document"],
            at=T0 + 402,
            author_name="canmore.create_textdoc",
        ),
        node("d-u2", "d-tool", "user", parts=["Add a last line."], at=T0 + 410),
        node(
            "d-edit",
            "d-u2",
            "assistant",
            content={"content_type": "code", "language": "json", "text": '{"updates": []}'},
            at=T0 + 411,
            recipient="canmore.update_textdoc",
        ),
        node("d-a2", "d-edit", "assistant", parts=["Done: water's sound."], at=T0 + 412),
    ]
    code = [
        *_root("e"),
        node("e-u1", "e-sys", "user", parts=["Show me hello world in Python."], at=T0 + 500),
        node(
            "e-recap",
            "e-u1",
            "assistant",
            content={"content_type": "reasoning_recap", "content": "Thought for 2 seconds"},
            at=T0 + 501,
        ),
        node(
            "e-code",
            "e-recap",
            "assistant",
            content={"content_type": "code", "language": "python", "text": 'print("hello")'},
            at=T0 + 502,
        ),
        node(
            "e-err",
            "e-code",
            "assistant",
            content={"content_type": "system_error", "name": "rate_limit", "text": None},
            at=T0 + 503,
        ),
    ]
    private = [
        *_root("f"),
        node(
            "f-u1", "f-sys", "user", parts=["My bank PIN hint is the cat's birthday."], at=T0 + 600
        ),
        node("f-a1", "f-u1", "assistant", parts=["Noted for this chat only."], at=T0 + 601),
    ]
    undated = [
        *_root("g"),
        node("g-u1", "g-sys", "user", parts=["A question from long ago."]),
        node("g-a1", "g-u1", "assistant", parts=["An answer without a date."]),
    ]
    return [
        conversation(cid(1), "Lisbon  trip\n", edited, updated=T0 + 64),
        conversation(cid(2), "Boiling eggs", voice, created=T0 + 100, updated=T0 + 104),
        conversation(cid(3), "Robin", pictures, created=T0 + 200, updated=T0 + 311),
        conversation(cid(4), "Haiku canvas", canvas, created=T0 + 400, updated=T0 + 412),
        conversation(cid(5), "Hello world", code, created=T0 + 500, updated=T0 + 503),
        conversation(cid(6), "Private", private, created=T0 + 600, is_do_not_remember=True),
        conversation(cid(7), None, undated, created=None, updated=None),
    ]


def bad_entries() -> list[dict[str, Any]]:
    """Two good conversations among four that cannot be read, as corrupted exports hold."""
    good = realistic()
    no_mapping = {"title": "Lost mapping", "id": cid(11), "create_time": T0}
    author_null = conversation(
        cid(12),
        "Null author",
        [*_root("h"), node("h-u1", "h-sys", "user", parts=["hi"], at=T0)],
    )
    author_null["mapping"]["h-u1"]["message"]["author"] = None
    cycle = conversation(
        cid(13), "Cycle", [node("i-1", "i-2", "user", parts=["a"]), node("i-2", "i-1", "user")]
    )
    dangling = conversation(
        cid(14), "Dangling", [node("j-1", "ghost", "user", parts=["where is my parent?"])]
    )
    return [good[1], no_mapping, author_null, cycle, dangling, good[2]]


def sharded(conversations: Sequence[dict[str, Any]], per_shard: int) -> dict[str, bytes]:
    """The 2026 zip layout: shards beside a manifest, user.json, chat.html and media."""
    files: dict[str, bytes] = {}
    shards = [conversations[i : i + per_shard] for i in range(0, len(conversations), per_shard)]
    names = [f"conversations-{n:03d}.json" for n in range(len(shards))]
    files["export_manifest.json"] = _json(
        {"export_version": 2, "files": [{"path": n, "type": "conversations"} for n in names]}
    )
    for name, shard in zip(names, shards, strict=True):
        files[name] = _json(shard)
    files.update(_companions())
    return files


def classic(conversations: Sequence[dict[str, Any]]) -> dict[str, bytes]:
    """The classic zip layout: one conversations.json beside user.json, chat.html and media."""
    return {"conversations.json": _json(conversations), **_companions()}


def _companions() -> dict[str, bytes]:
    return {
        "user.json": _json({"id": "user-x", "email": "robin@example.org", "phone_number": None}),
        "chat.html": b"<html><body>Exported conversations</body></html>",
        "file-Robin01-robin.jpg": bytes(range(256)) * 4,
        "audio/file_voice1.wav": b"RIFF" + bytes(64),
    }


def claude() -> list[dict[str, Any]]:
    """Claude's export: text parts, thinking, an artifact, an attachment's extracted text."""
    account = {"uuid": "0b5e0c3a-0000-4000-8000-00000000cafe"}
    return [
        {
            "uuid": "7c1d2e3f-0000-4000-8000-000000000001",
            "name": "Tomato sauce",
            "summary": "",
            "created_at": "2026-01-03T09:00:00.000000Z",
            "updated_at": "2026-01-03T09:05:00.000000Z",
            "account": account,
            "chat_messages": [
                {
                    "uuid": "c1-m1",
                    "text": "How long should tomato sauce simmer?",
                    "content": [
                        {
                            "start_timestamp": "2026-01-03T09:00:00.000000Z",
                            "stop_timestamp": "2026-01-03T09:00:00.000000Z",
                            "type": "text",
                            "text": "How long should tomato sauce simmer?",
                            "citations": [],
                        }
                    ],
                    "sender": "human",
                    "created_at": "2026-01-03T09:00:00.000000Z",
                    "updated_at": "2026-01-03T09:00:00.000000Z",
                    "attachments": [
                        {
                            "file_name": "recipe.txt",
                            "file_size": 40,
                            "file_type": "text/plain",
                            "extracted_content": "Nonna's recipe: simmer for 45 minutes.",
                        }
                    ],
                    "files": [],
                },
                {
                    "uuid": "c1-m2",
                    "text": "",
                    "content": [
                        {"type": "thinking", "thinking": "The recipe says 45 minutes."},
                        {"type": "text", "text": "Your recipe says 45 minutes; 30 to 60 is usual."},
                        {
                            "type": "tool_use",
                            "name": "artifacts",
                            "input": {"title": "Timer plan", "content": "0:00 start\n0:45 done"},
                        },
                    ],
                    "sender": "assistant",
                    "created_at": "2026-01-03T09:00:05.000000Z",
                    "updated_at": "2026-01-03T09:00:05.000000Z",
                    "attachments": [],
                    "files": [],
                },
            ],
        },
        {
            "uuid": "7c1d2e3f-0000-4000-8000-000000000002",
            "name": "",
            "summary": "",
            "created_at": "2026-01-04T10:00:00.000000Z",
            "updated_at": "2026-01-04T10:00:00.000000Z",
            "account": account,
            "chat_messages": [
                {
                    "uuid": "c2-m1",
                    "text": "Plain text only",
                    "sender": "human",
                    "created_at": "2026-01-04T10:00:00.000000Z",
                    "attachments": [],
                    "files": [{"file_name": "photo.png"}],
                },
                {
                    "uuid": "c2-m2",
                    "text": "An answer.",
                    "sender": "assistant",
                    "created_at": "2026-01-04T10:00:01.000000Z",
                    "attachments": [],
                    "files": [],
                },
            ],
        },
    ]


def chatgpt_conversation(n: int, turns: int, rng: random.Random) -> dict[str, Any]:
    """A plain conversation of `turns` user/assistant pairs of varied text (for the bench)."""
    nodes = _root(f"n{n}")
    parent = f"n{n}-sys"
    at = T0 + n * 3600
    for t in range(turns):
        for role in ("user", "assistant"):
            node_id = f"n{n}-{t}-{role[0]}"
            words = rng.randint(8, 60) if role == "user" else rng.randint(60, 330)
            text = " ".join(rng.choice(_WORDS) for _ in range(words))
            nodes.append(node(node_id, parent, role, parts=[text], at=at))
            parent, at = node_id, at + rng.randint(2, 90)
    return conversation(cid(100_000 + n), f"Chat {n}", nodes, created=T0 + n * 3600, updated=at)


_WORDS = (
    "the of and to in is you that it he was for on are as with his they at be this have from "
    "or one had by word but not what all were we when your can said there use an each which "
    "she do how their if will up other about out many then them these so some her would make "
    "like him into time has look two more write go see number no way could people my than "
    "first water been call who oil its now find long down day did get come made may part "
    "Lisbon Porto robin sauce tomato garden train ticket museum coffee recipe budget ünïcode ☕"
).split()


def _json(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, indent=None).encode("utf-8")


def zip_bytes(files: dict[str, bytes]) -> bytes:
    """A deterministic zip of these files (fixed times, deflated)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            info = zipfile.ZipInfo(name, ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, data)
    return buffer.getvalue()


def fixtures() -> Iterator[tuple[str, bytes]]:
    """Every fixture file: its name under tests/data/exports and its bytes."""
    real = realistic()
    yield "chatgpt-realistic.json", _json(real)
    yield "chatgpt-classic.zip", zip_bytes(classic(real))
    yield "chatgpt-sharded.zip", zip_bytes(sharded(real, 3))
    yield "chatgpt-shard-001.json", _json(real[3:6])
    yield "chatgpt-bad-entries.json", _json(bad_entries())
    yield "chatgpt-empty.json", b"[]"
    yield "chatgpt-truncated.json", _json(real)[:-700]
    yield "chatgpt-not-utf8.json", _json(real[:1])[:200] + b"\xff\xfe" + _json(real[:1])[200:]
    yield "claude-conversations.json", _json(claude())
    yield (
        "claude-export.zip",
        zip_bytes(
            {
                "conversations.json": _json(claude()),
                "users.json": _json([{"uuid": "0b5e0c3a-0000-4000-8000-00000000cafe"}]),
                "projects.json": b"[]",
            }
        ),
    )
    # A bomb: 8 MB of spaces that deflate to a few kB, named like the conversations.
    yield "zip-bomb.zip", zip_bytes({"conversations.json": b"[" + b" " * (8 << 20) + b"]"})
    # Names that point outside the archive are never read.
    yield (
        "zip-traversal.zip",
        zip_bytes({"../conversations.json": _json(real), "/tmp/conversations.json": _json(real)}),
    )


def main() -> None:
    """Write the fixtures."""
    HERE.mkdir(exist_ok=True)
    for name, data in fixtures():
        (HERE / name).write_bytes(data)
        print(f"{name}: {len(data):,} bytes")


if __name__ == "__main__":
    main()
