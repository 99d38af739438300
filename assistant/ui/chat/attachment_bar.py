"""The files about to be sent with a message: a chip each above the input (name, size, pages),
removed with a click or with Delete, Backspace or Space; a line under them says why a file
was not attached. While a sent message is edited, its files have chips too (`show_sent`):
the new version carries those left, and only those.

Each file is checked as it is added (`knowledge.attachments.probe`: kind, size limit, text
or not, a PDF's password and pages), and an image is refused while the conversation's model is
known not to take images; the copy into the data dir is made when it is sent.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QLabel, QPushButton, QVBoxLayout, QWidget

from assistant.ui.flow_layout import FlowLayout

if TYPE_CHECKING:
    from assistant.knowledge import Attachment

CHIP_MAX_WIDTH = 260
MAX_FILES = 10  # per message: more would crowd out the message itself


class AttachmentChip(QPushButton):
    """One file about to be sent: a click, Delete, Backspace or Space removes it."""

    remove = Signal()

    def __init__(
        self, attachment: Attachment, parent: QWidget | None = None, *, sent: bool = False
    ) -> None:
        super().__init__(parent)
        self.attachment = attachment
        self.sent = sent  # the copy of a file the message being edited carries
        self.setObjectName("attachmentChip")
        text = f"▤ {attachment.label()}  ✕"
        self.setText(self.fontMetrics().elidedText(text, Qt.TextElideMode.ElideMiddle,
                                                   CHIP_MAX_WIDTH))  # fmt: skip
        where = f"{attachment.name}, sent with the message" if sent else str(attachment.path)
        self.setToolTip(f"{where}\nClick (or press Delete) to remove it")
        self.setAccessibleName(f"Attached file {attachment.label()}")
        self.setAccessibleDescription("Press Delete or Space to remove the file from the message")
        self.setFocusPolicy(Qt.FocusPolicy.TabFocus)
        self.clicked.connect(self.remove)

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802
        if event.key() in (Qt.Key.Key_Delete, Qt.Key.Key_Backspace):
            self.remove.emit()
        else:
            super().keyPressEvent(event)


class AttachmentBar(QWidget):
    """The chips of the files to send, and the line saying why a file was refused."""

    changed = Signal()  # a file was added or removed
    emptied = Signal()  # the user removed the last file (the keyboard goes back to the input)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("attachmentBar")
        self._chips: list[AttachmentChip] = []
        # The conversation's model if it was found not to take images (None: it may).
        self.model_refusing_images: Callable[[], str | None] = lambda: None
        self._images_refused = False  # the line under the chips says the images cannot go
        self._row = FlowLayout()  # more rows rather than chips squeezed (names cut, ✕ hidden)
        self._row.setContentsMargins(0, 0, 0, 0)
        self.problem = QLabel(self)
        self.problem.setObjectName("attachmentProblem")
        self.problem.setWordWrap(True)
        self.problem.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.problem.hide()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 2)
        layout.addLayout(self._row)
        layout.addWidget(self.problem)
        self.hide()

    def files(self) -> list[Path]:
        """The new files to send, in the order they were added."""
        return [chip.attachment.path for chip in self._chips if not chip.sent]

    def take_new(self) -> list[Path]:
        """Take the new files out of the bar (to be put back later with `add`)."""
        chips = [chip for chip in self._chips if not chip.sent]
        for chip in chips:
            self._remove(chip, focus=False)
        self.say("")
        return [chip.attachment.path for chip in chips]

    def kept(self) -> list[str]:
        """The ids of the message's files that its new version carries (see `show_sent`)."""
        return [chip.attachment.id for chip in self._chips if chip.sent]

    def show_sent(self, attachments: Iterable[Attachment]) -> None:
        """Show the files of the message being edited (their copies), ahead of any new ones,
        in place of those of a message edited before; none: editing ended."""
        for chip in [c for c in self._chips if c.sent]:
            self._remove(chip, focus=False)
        for index, attachment in enumerate(attachments):
            self._add_chip(attachment, sent=True, at=index)
        self.say("")

    def add(self, paths: Iterable[Path]) -> list[str]:
        """Check and add files (one already there is not added again); what was refused, in
        words (also shown under the chips until the next change)."""
        from assistant.knowledge.attachments import AttachmentError, image_refused, probe

        problems = []
        for path in paths:
            if path in (chip.attachment.path for chip in self._chips):
                continue
            if len(self._chips) >= MAX_FILES:
                problems.append(f"{path.name}: a message can carry at most {MAX_FILES} files.")
                continue
            try:
                attachment = probe(path)
            except AttachmentError as exc:
                problems.append(str(exc))
                continue
            model = self.model_refusing_images() if attachment.kind == "image" else None
            if model is not None:
                problems.append(image_refused(path.name, model, attached=False))
                continue
            self._add_chip(attachment)
        self.say(" ".join(problems))
        self._update()
        return problems

    def refused_images(self) -> str:
        """Why the images among the files cannot be sent to the conversation's model ("" if
        they can, or if there are none)."""
        from assistant.knowledge.attachments import image_refused

        images = [c.attachment.name for c in self._chips if c.attachment.kind == "image"]
        model = self.model_refusing_images() if images else None
        return "" if model is None else image_refused(", ".join(images), model, attached=True)

    def recheck(self) -> None:
        """Say at once if the images attached cannot go to the model now chosen (and take
        that line back once they can)."""
        refused = self.refused_images()
        if refused:
            self.say(refused)
        elif self._images_refused:
            self.say("")

    def say(self, text: str) -> None:
        """Show `text` (why a file was refused) under the chips; "" hides the line."""
        self._images_refused = bool(text) and text == self.refused_images()
        self.problem.setText(f"⚠ {text}" if text else "")
        self.problem.setVisible(bool(text))
        self._update()

    def clear(self) -> None:
        """Remove every file (the message was sent)."""
        for chip in list(self._chips):
            self._remove(chip, focus=False)
        self.say("")

    def _add_chip(
        self, attachment: Attachment, *, sent: bool = False, at: int | None = None
    ) -> None:
        chip = AttachmentChip(attachment, self, sent=sent)
        chip.remove.connect(lambda: self._remove(chip))
        index = len(self._chips) if at is None else at
        self._row.insert_widget(index, chip)
        self._chips.insert(index, chip)

    def _remove(self, chip: AttachmentChip, *, focus: bool = True) -> None:
        index = self._chips.index(chip)
        self._chips.remove(chip)
        self._row.removeWidget(chip)
        chip.deleteLater()
        if focus and self._chips:  # the keyboard stays on the chips
            self._chips[min(index, len(self._chips) - 1)].setFocus()
        elif focus:
            self.emptied.emit()
        self._update()

    def _update(self) -> None:
        # isHidden, not isVisible: the line is not visible while the bar itself is hidden
        self.setVisible(bool(self._chips) or not self.problem.isHidden())
        self.changed.emit()
