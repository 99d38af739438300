"""An image attached for a model that takes none: the real provider against the fake server,
which refuses image parts for a text-only model in a real server's words. The first refusal is
recognised and learned, the turn ends with a clear line (not the server's error), the message
keeps its text and files, and Retry with a model that sees images sends them all; once known,
the refusal comes before anything is sent."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import openai
import pytest

from assistant.agent.cancel import CancelToken
from assistant.agent.events import AgentEvent, Failed, Finished
from assistant.agent.provider import _NO_IMAGES
from assistant.errors import ImagesRefusedError
from assistant.workspace import Workspace
from tests.desktop import configure
from tests.fake_openai import IMAGES_REFUSALS, FakeOpenAI, ImagesStyle, Reply, message_text

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
SEES = "chat-model"  # the settings' model: takes images
BLIND = "text-model"  # refuses them


def chat_requests(fake: FakeOpenAI) -> list[dict[str, Any]]:
    return [r.body for r in fake.requests_to("/chat/completions")]


def images_in(body: dict[str, Any]) -> list[str]:
    messages = body["messages"]
    assert isinstance(messages, list)
    return [
        part["image_url"]["url"]
        for m in messages
        if isinstance(m.get("content"), list)
        for part in m["content"]
        if part.get("type") == "image_url"
    ]


@pytest.mark.parametrize("style", list(IMAGES_REFUSALS))
def test_an_image_refused_by_a_text_only_model_gets_a_clear_line_and_waits_for_retry(
    data_dir: Path, tmp_path: Path, style: ImagesStyle
) -> None:
    with FakeOpenAI(text_only=[BLIND], images_style=style) as fake:
        configure(data_dir, fake, embeddings=False)
        workspace = Workspace.open(data_dir)
        try:
            notices: list[str] = []
            workspace.notices.subscribe(notices.append)
            agent = workspace.agent()
            cid = workspace.conversations.create().id
            workspace.conversations.set_model(cid, BLIND)
            photo = tmp_path / "photo.png"
            photo.write_bytes(PNG)
            notes = tmp_path / "notes.md"
            notes.write_text("# Notes\n\nThe mug is blue.\n")
            refs = [workspace.attachments.add(cid, p).ref() for p in (photo, notes)]
            assert not workspace.refuses_images(BLIND)  # not known yet

            events: list[AgentEvent] = []
            agent.run(cid, "What colour is it?", events.append, CancelToken(), attachments=refs)
            (failed,) = [e for e in events if isinstance(e, Failed)]
            assert failed.error == str(ImagesRefusedError(BLIND, ("photo.png",)))
            assert failed.error.startswith(
                f"{BLIND} does not accept images, so photo.png could not be sent"
            )
            assert "Retry" in failed.error and "400" not in failed.error
            assert "500" not in failed.error and "mmproj" not in failed.error
            (refused,) = chat_requests(fake)  # asked once: the image is not described instead
            assert images_in(refused) == [f"data:image/png;base64,{base64.b64encode(PNG).decode()}"]
            assert workspace.refuses_images(BLIND) and not workspace.refuses_images(SEES)
            assert notices == []  # the failed turn said it
            # The message keeps its text and both files; no reply was saved.
            (user,) = workspace.conversations.load(cid).messages
            assert user.content == "What colour is it?"
            assert [a.name for a in user.attachments] == ["photo.png", "notes.md"]

            # Retry with the same model: refused at once, nothing sent.
            events.clear()
            agent.retry(cid, events.append, CancelToken())
            assert [e.error for e in events if isinstance(e, Failed)] == [failed.error]
            assert len(chat_requests(fake)) == 1

            # Another model, then Retry: the image and the text file go, the reply is saved.
            workspace.conversations.set_model(cid, SEES)
            fake.enqueue(Reply.text("It is blue."))
            events.clear()
            agent.retry(cid, events.append, CancelToken())
            assert [type(e) for e in events if isinstance(e, Failed | Finished)] == [Finished]
            answered = chat_requests(fake)[-1]
            assert answered["model"] == SEES and len(images_in(answered)) == 1
            user_message = [m for m in answered["messages"] if m["role"] == "user"][-1]
            assert "The mug is blue." in message_text(user_message)
            assert workspace.conversations.load(cid).messages[-1].content == "It is blue."
        finally:
            workspace.close()


@pytest.mark.parametrize(
    "message",
    [
        "Invalid content type. image_url is only supported by certain models.",
        "Qwen/Qwen3-8B is not a multimodal model",
        "registry.ollama.ai/library/llama3:latest does not support images",
        "this model does not support image input",
        "image input is not supported - hint: if this is unexpected, you may need to provide "
        "the mmproj",
        "Model does not support images. Please use a model that does.",
        "Failed to deserialize the JSON body: unknown variant `image_url`, expected `text`",
        "At most 0 image(s) may be provided in one request.",
        "Images are not supported for this model",
        "This model does not support vision",
    ],
)
def test_servers_words_for_a_model_without_vision_are_recognised(message: str) -> None:
    assert _NO_IMAGES.search(message)


@pytest.mark.parametrize(
    "message",
    [
        "Image too large: 9000 pixels exceeds 8000 per side",
        "messages.0.content.1.image_url: image exceeds 20 MB maximum",
        "invalid image data: could not decode image/png",
        "max_tokens is too large: 900000",
    ],
)
def test_a_refusal_of_one_image_is_not_taken_for_a_model_without_vision(message: str) -> None:
    """Learned wrongly, it would refuse every image for that model until the app restarts."""
    assert not _NO_IMAGES.search(message)


def test_the_fake_refuses_only_the_text_only_model() -> None:
    fake = FakeOpenAI(text_only=[BLIND]).start()
    try:
        client = fake.client()
        image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA=="}}
        parts = [{"role": "user", "content": [{"type": "text", "text": "hi"}, image]}]
        client.chat.completions.create(model=SEES, messages=parts)  # type: ignore[arg-type]
        with pytest.raises(openai.BadRequestError, match="only supported by certain models"):
            client.chat.completions.create(model=BLIND, messages=parts)  # type: ignore[arg-type]
    finally:
        fake.stop()
