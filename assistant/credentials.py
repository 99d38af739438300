"""The API key: `OPENAI_API_KEY`, else the OS keyring (service `Assistant`), else this run only;
and other secrets (MCP servers' tokens) in the same keyring service.

The key is never written to a file or a log. When no keyring backend works (a headless Linux
without Secret Service), storing raises `CredentialError` with a message for the user and the
key is kept in memory until the app quits.
"""

from __future__ import annotations

import contextlib
import logging
import os

import keyring
import keyring.errors

from assistant import APP_NAME
from assistant.errors import CredentialError
from assistant.redaction import add_secret

log = logging.getLogger(__name__)

API_KEY_ENV = "OPENAI_API_KEY"
KEYRING_SERVICE = APP_NAME
KEYRING_USERNAME = "api_key"


class Credentials:
    """Reads and stores the API key; one instance lives as long as the app."""

    def __init__(self) -> None:
        self._session_key: str | None = None
        self._session_secrets: dict[str, str] = {}
        self._warned = False

    def api_key(self) -> str | None:
        """The key to use: the environment, else a key kept for this run, else the keyring.

        The key read is registered for redaction (`assistant.redaction`).
        """
        key = self._read()
        add_secret(key)
        return key

    def _read(self) -> str | None:
        env = os.environ.get(API_KEY_ENV)
        if env:
            return env
        if self._session_key is not None:
            return self._session_key
        try:
            key: str | None = keyring.get_password(KEYRING_SERVICE, KEYRING_USERNAME)
        except keyring.errors.KeyringError as exc:
            if not self._warned:  # asked often (status updates); the window says it (see
                # `keyring_missing`), so the log only notes it
                log.info("Could not read the API key from the keyring: %s", type(exc).__name__)
                self._warned = True
            return None
        return key or None

    def set_api_key(self, key: str) -> None:
        """Store the key in the keyring; without one, keep it for this run and raise."""
        key = key.strip()
        if not key:
            self.delete_api_key()
            return
        add_secret(key)
        try:
            keyring.set_password(KEYRING_SERVICE, KEYRING_USERNAME, key)
        except keyring.errors.KeyringError as exc:
            self._session_key = key
            raise CredentialError(
                "No system keyring is available, so the API key is kept for this session only "
                "and will be asked for again next time."
            ) from exc
        self._session_key = None

    def delete_api_key(self) -> None:
        """Forget the key in this run and remove it from the keyring if it is there."""
        self._session_key = None
        try:
            keyring.delete_password(KEYRING_SERVICE, KEYRING_USERNAME)
        except keyring.errors.PasswordDeleteError:
            pass
        except keyring.errors.KeyringError as exc:
            raise CredentialError(f"Could not remove the key from the keyring: {exc}") from exc

    def source(self) -> str:
        """Where the key in use comes from, in words for the settings dialog."""
        if os.environ.get(API_KEY_ENV):
            return f"the {API_KEY_ENV} environment variable"
        if self._session_key is not None:
            return "memory, for this session only (no system keyring is available)"
        return f"the system keyring ({backend_name()})"

    def secret(self, name: str) -> str | None:
        """Another secret kept in the keyring under `name` (an MCP server's token), if any."""
        if name in self._session_secrets:
            return self._session_secrets[name]
        try:
            value: str | None = keyring.get_password(KEYRING_SERVICE, name)
        except keyring.errors.KeyringError as exc:
            log.warning("Could not read a secret from the keyring: %s", type(exc).__name__)
            return None
        return value

    def set_secret(self, name: str, value: str) -> None:
        """Keep a secret in the keyring; without one, for this run only, and raise."""
        try:
            keyring.set_password(KEYRING_SERVICE, name, value)
        except keyring.errors.KeyringError as exc:
            self._session_secrets[name] = value
            raise CredentialError(
                "No system keyring is available, so the secret is kept for this session only "
                "and will be asked for again next time."
            ) from exc
        self._session_secrets.pop(name, None)

    def delete_secret(self, name: str) -> None:
        """Forget a secret kept with `set_secret` (nothing if there is none)."""
        self._session_secrets.pop(name, None)
        with contextlib.suppress(keyring.errors.KeyringError):  # PasswordDeleteError: none
            keyring.delete_password(KEYRING_SERVICE, name)

    def keyring_available(self) -> bool:
        """Whether a keyring backend that can store secrets is configured."""
        return type(keyring.get_keyring()).__module__ != "keyring.backends.fail"

    def keyring_missing(self) -> bool:
        """Whether a key could not be saved for the next run: no keyring backend works (and
        the key does not come from the environment, which needs none)."""
        if os.environ.get(API_KEY_ENV):
            return False
        return self._warned or not self.keyring_available()


def backend_name() -> str:
    """A readable name of the active keyring backend."""
    backend = keyring.get_keyring()
    return str(getattr(backend, "name", type(backend).__name__))
