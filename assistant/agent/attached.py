"""What a turn sends of the files attached in its conversation.

The user message being answered carries the text of every file attached on its branch so far
(the passages closest to it when they do not all fit, see `knowledge.attachments.prepare`),
fenced as quoted data, and the images attached to it as `image_url` parts; an earlier message
that carried files names them. The prompt is built anew each turn, so nothing of this is saved.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from assistant.memory import AttachedFile, Conversation, Message, estimate_tokens

if TYPE_CHECKING:
    from assistant.knowledge import AttachmentStore

ATTACHMENT_SHARE = 0.5  # of the prompt budget, at most, for the attached files' text
ATTACHED_SOURCE = "attached files"


@dataclass(frozen=True)
class TurnFiles:
    """The attached files' part of a turn's prompt: for the message `message_id`."""

    message_id: str
    text: str = ""  # fenced by the prompt
    images: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # for the user: what was cut or not sent

    @property
    def tokens(self) -> int:
        """The estimated prompt tokens of the text (images are not counted: servers differ)."""
        return estimate_tokens(self.text) + 8 if self.text else 0


def turn_files(
    store: AttachmentStore,
    conversation: Conversation,
    user: Message,
    budget_tokens: int,
    *,
    accepts_images: bool = True,
) -> TurnFiles | None:
    """The files attached on the branch up to `user` (its images only), prepared for the
    prompt; None if there are none. AttachmentError for an image the model cannot take."""
    from assistant.knowledge import AttachmentError, prepare

    branch = conversation.branch()
    ids = [m.id for m in branch]
    upto = branch[: ids.index(user.id) + 1] if user.id in ids else [user]
    chosen: dict[str, AttachedFile] = {}
    for message in upto:
        for ref in message.attachments:
            if ref.kind != "image" or message.id == user.id:
                chosen.setdefault(ref.id, ref)
    if not chosen:
        return None
    files, notes = [], []
    for ref in chosen.values():
        try:
            files.append(store.resolve(conversation.id, ref))
        except AttachmentError as exc:
            notes.append(str(exc))
    attached = prepare(
        files,
        user.content,
        budget_tokens=int(budget_tokens * ATTACHMENT_SHARE),
        accepts_images=accepts_images,
    )
    return TurnFiles(user.id, attached.text, attached.images, [*notes, *attached.notes])


def names_line(message: Message) -> str:
    """The line an earlier message's attachments add to it in the prompt ("" if none)."""
    if not message.attachments:
        return ""
    return f"(Attached: {', '.join(a.name for a in message.attachments)})"
