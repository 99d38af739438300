"""The API key field of the settings: typed hidden (an eye shows it), removed on request, and
stored in the keyring only on OK, with lines that say where the key is and will be kept."""

from __future__ import annotations

import os
from collections.abc import Callable

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QAction, QColor, QIcon, QPainter, QPainterPath, QPen, QPixmap
from PySide6.QtWidgets import QGroupBox, QHBoxLayout, QLabel, QLineEdit, QPushButton, QWidget

from assistant.credentials import API_KEY_ENV, Credentials, backend_name
from assistant.errors import CredentialError
from assistant.settings import PROVIDERS, ProviderName
from assistant.ui.settings.form import WARNING_COLOR, SettingsForm


class KeyBox(QGroupBox):
    """The "API key" group: the key, Remove key, and notes on where it is kept."""

    def __init__(self, credentials: Credentials, parent: QWidget | None = None) -> None:
        super().__init__("API key", parent)
        self._credentials = credentials
        self._remove_requested = False
        self._original = ""  # the saved key, as loaded
        self.form = SettingsForm(self)

        self.edit = QLineEdit(self)
        self.edit.setObjectName("apiKeyEdit")
        self.edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.edit.setToolTip(
            "The secret key of your account at the provider (sk-…). It is kept in the system "
            "keyring, never in the settings file."
        )
        self.edit.textChanged.connect(self._update)
        color = self.palette().color(self.edit.foregroundRole())
        self._show_icon = _eye_icon(color, crossed=False)
        self._hide_icon = _eye_icon(color, crossed=True)
        self._show_key = QAction(self._show_icon, "Show Key", self.edit)
        self._show_key.setObjectName("showKeyAction")
        self._show_key.setCheckable(True)
        self._show_key.setToolTip("Show the key")
        self._show_key.toggled.connect(self._on_show_key_toggled)
        self.edit.addAction(self._show_key, QLineEdit.ActionPosition.TrailingPosition)

        self.remove = QPushButton("Re&move Key", self)
        self.remove.setObjectName("removeKeyButton")
        self.remove.setToolTip("Delete the saved key from the keyring when you press OK.")
        self.remove.clicked.connect(self._on_remove_clicked)
        row = QHBoxLayout()
        row.addWidget(self.edit, 1)
        row.addWidget(self.remove)
        label = QLabel("API &key:", self)
        label.setBuddy(self.edit)
        self.form.add_row(label, row)

        self._source = self.form.add_note(name="keySourceLabel")
        self.form.add_note(
            "No system keyring is available: the key will be kept in memory for this session "
            "only, and asked for again next time."
            if not credentials.keyring_available()
            else "",
            WARNING_COLOR,
            name="keyringWarning",
        )
        self.form.add_note(
            f"{API_KEY_ENV} is set in the environment and overrides the key saved here."
            if os.environ.get(API_KEY_ENV)
            else "",
            WARNING_COLOR,
            name="apiKeyEnvNote",
        )

    def set_provider(self, provider: ProviderName) -> None:
        """Say in the empty field whether `provider` needs a key."""
        self.edit.setPlaceholderText(PROVIDERS[provider].key_hint)

    def load(self) -> None:
        """Show the saved key (the environment's is not ours to show or store)."""
        if not os.environ.get(API_KEY_ENV):
            self._original = self._credentials.api_key() or ""
        self.edit.setText(self._original)
        self._update()

    def typed(self) -> str | None:
        """The key in the field, or None if it is empty."""
        return self.edit.text().strip() or None

    def store(self, warn: Callable[[str], None]) -> None:
        """Store a new key, or delete the saved one if it was removed; `warn` hears problems."""
        key = self.edit.text().strip()
        try:
            if key and key != self._original:
                self._credentials.set_api_key(key)
            elif not key and (self._remove_requested or self._original):
                self._credentials.delete_api_key()
        except CredentialError as exc:
            warn(str(exc))
        self._original = key
        self._remove_requested = False

    def _on_show_key_toggled(self, shown: bool) -> None:
        self.edit.setEchoMode(QLineEdit.EchoMode.Normal if shown else QLineEdit.EchoMode.Password)
        self._show_key.setIcon(self._hide_icon if shown else self._show_icon)
        self._show_key.setToolTip("Hide the key" if shown else "Show the key")

    def _on_remove_clicked(self) -> None:
        self.edit.clear()
        self._remove_requested = True
        self._update()

    def _update(self) -> None:
        """Say where the key is kept (or will be), and whether there is one to remove."""
        typed = self.edit.text().strip()
        from_env = bool(os.environ.get(API_KEY_ENV))
        if typed and typed != self._original:
            where = (
                "the system keyring"
                if self._credentials.keyring_available()
                else "memory for this session"
            )
            text = f"The new key will be stored in {where} when you press OK."
        elif not typed and (self._remove_requested or self._original):
            text = "The saved key will be removed when you press OK."
        elif from_env and self._credentials.keyring_available():
            text = f"A key entered here is stored in the system keyring ({backend_name()})."
        elif from_env:
            text = "A key entered here is kept for this session only."
        elif typed:
            text = f"Stored in {self._credentials.source()}."
        else:
            text = "No key saved."
        self.form.set_note(self._source, text)
        self.remove.setEnabled(bool(typed) or (from_env and not self._remove_requested))


def _eye_icon(color: QColor, *, crossed: bool) -> QIcon:
    """An eye (or a crossed-out eye) for the show/hide key action, in the text colour."""
    for name in ("view-conceal-symbolic", "view-hidden") if crossed else ("view-reveal-symbolic",):
        if QIcon.hasThemeIcon(name):
            return QIcon.fromTheme(name)
    pixmap = QPixmap(32, 32)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setPen(QPen(color, 2.4))
    outline = QPainterPath(QPointF(3, 16))
    outline.quadTo(QPointF(16, 3), QPointF(29, 16))
    outline.quadTo(QPointF(16, 29), QPointF(3, 16))
    painter.drawPath(outline)
    painter.setBrush(color)
    painter.drawEllipse(QRectF(11.5, 11.5, 9, 9))
    if crossed:
        painter.drawLine(QPointF(6, 27), QPointF(26, 5))
    painter.end()
    return QIcon(pixmap)
