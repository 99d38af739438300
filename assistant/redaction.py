"""Keeping the API key out of every text the app shows or logs.

A key is registered (`add_secret`) wherever one is read or handed to a client; from then on
`redact` replaces it in any text, and every log record, of any logger and level, is redacted
when it is made: its message, its traceback and its stack. Texts are redacted before they are
shortened, so that a key cut at the end of a window cannot show in part.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

REDACTED = "***"
# Shorter "keys" are placeholders ("none", "EMPTY") that local servers accept: replacing them
# would garble ordinary words, and they protect nothing.
MIN_SECRET_CHARS = 8


class _Registry:
    """The secrets known so far; the log record factory is wrapped when the first one comes."""

    def __init__(self) -> None:
        self.secrets: tuple[str, ...] = ()
        self._lock = threading.Lock()
        self._installed = False

    def add(self, secret: str) -> None:
        with self._lock:
            # Longest first, so that a key that contains another is replaced whole.
            self.secrets = tuple(sorted({*self.secrets, secret}, key=len, reverse=True))
            if not self._installed:
                self._installed = True
                _install()


_registry = _Registry()


def add_secret(secret: str | None) -> None:
    """Redact `secret` from now on, in texts and in every log record."""
    secret = (secret or "").strip()
    if len(secret) >= MIN_SECRET_CHARS and secret not in _registry.secrets:
        _registry.add(secret)


def redact(text: str) -> str:
    """`text` with every registered secret replaced by `***`."""
    for secret in _registry.secrets:
        if secret in text:
            text = text.replace(secret, REDACTED)
    return text


def _install() -> None:
    """Wrap the log record factory, so that every record is redacted when it is made."""
    made = logging.getLogRecordFactory()

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = made(*args, **kwargs)
        _redact_record(record)
        return record

    logging.setLogRecordFactory(factory)


def _redact_record(record: logging.LogRecord) -> None:
    try:
        message = record.getMessage()
    except Exception:  # a bad format: logging reports it when the record is emitted
        message = str(record.msg)
        record.args = None
    clean = redact(message)
    if clean != message:
        record.msg, record.args = clean, None
    if record.exc_info and record.exc_info[1] is not None:
        # Formatters use `exc_text` when it is set: the traceback is formatted once, redacted.
        record.exc_text = redact(logging.Formatter().formatException(record.exc_info))
    if record.stack_info:
        record.stack_info = redact(record.stack_info)
