"""The import preview's question when the file has projects named as projects here: merge each
with the one here, or keep them apart."""

from __future__ import annotations

from PySide6.QtWidgets import QButtonGroup, QGroupBox, QLabel, QRadioButton, QVBoxLayout, QWidget

from assistant.transfer.plan import ProjectPolicy
from assistant.ui.wording import count


class ProjectChoice(QGroupBox):
    """ "Merge" (the default) or "Keep apart" for the projects of the same name."""

    def __init__(self, names: list[str], parent: QWidget | None = None) -> None:
        super().__init__("Projects of the same name", parent)
        self.setObjectName("importProjectChoice")
        listed = ", ".join(f"“{n}”" for n in names[:3]) + (" …" if len(names) > 3 else "")
        label = QLabel(
            f"{count(len(names), 'project')} of this file {'has' if len(names) == 1 else 'have'}"
            f" the name of a project here: {listed}.",
            self,
        )
        label.setWordWrap(True)
        self.merge = QRadioButton("Merge them: one project each, with both its chats", self)
        self.merge.setObjectName("importProjectsMerge")
        self.apart = QRadioButton("Keep them apart: add the imported ones as “… (imported)”", self)
        self.apart.setObjectName("importProjectsApart")
        group = QButtonGroup(self)
        group.addButton(self.merge)
        group.addButton(self.apart)
        self.merge.setChecked(True)
        layout = QVBoxLayout(self)
        for widget in (label, self.merge, self.apart):
            layout.addWidget(widget)

    def policy(self) -> ProjectPolicy:
        """What the user chose."""
        return "apart" if self.apart.isChecked() else "merge"
