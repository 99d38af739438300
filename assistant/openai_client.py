"""The `openai` clients of the app: built from the settings, shared by chat and embeddings.

`openai` loads slowly, so this module imports it only when a client is first built.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING
from urllib.parse import urlsplit, urlunsplit

from assistant.credentials import Credentials
from assistant.errors import ProviderError
from assistant.redaction import add_secret
from assistant.settings import Settings

if TYPE_CHECKING:
    import openai

# Local servers ignore the key, but the client insists on one.
NO_API_KEY = "not-needed"

_Key = tuple[str, str, float]  # base URL, API key, timeout


def openai_client(settings: Settings, credentials: Credentials) -> openai.OpenAI:
    """A new client for the configured server, key and timeout (callers retry themselves)."""
    return _build(_key(settings, credentials))


def list_models(client: openai.OpenAI, model: str = "") -> list[str]:
    """The names of the models the server offers, sorted; checks URL and key (blocks).

    Raises ProviderError (naming `model`, the chat model, if the server does not know it).
    """
    from assistant.openai_errors import CLIENT_ERRORS, provider_error

    try:
        page = client.models.list()
        names = [getattr(model, "id", None) for model in page.data]
    except CLIENT_ERRORS as err:
        raise provider_error(err, client, model=model, purpose="models") from err
    return sorted(name for name in names if isinstance(name, str))


def probe_server(settings: Settings, credentials: Credentials) -> tuple[str, list[str]]:
    """The URL and the model names of the server `settings` describe, asked with a client of
    its own (Settings' "Refresh models" and "Test connection", before the values are saved).

    A URL without a path that has no models endpoint where `URL/v1` has one is named in the
    error ("Did you mean http://host:port/v1?").
    """
    import openai

    from assistant.openai_errors import server_url

    key = _key(settings, credentials)
    client = _build(key)
    try:
        return server_url(client), list_models(client, settings.chat_model)
    except ProviderError as err:
        if not isinstance(err.__cause__, openai.NotFoundError):
            raise
        suggested = _with_v1(key)
        if suggested is None:
            raise
        raise ProviderError(
            f"{server_url(client)} has no models endpoint (HTTP 404). Did you mean {suggested}?",
            status=err.status,
        ) from err
    finally:
        client.close()


def _with_v1(key: _Key) -> str | None:
    """`URL/v1` if the URL of `key` has no path and the server answers there (blocks)."""
    base_url, api_key, timeout = key
    parts = urlsplit(base_url)
    if parts.path.strip("/"):
        return None
    suggested = urlunsplit(parts._replace(path="/v1")).rstrip("/")
    client = _build((suggested, api_key, timeout))
    try:
        list_models(client)
    except ProviderError:
        return None
    finally:
        client.close()
    return suggested


def _build(key: _Key) -> openai.OpenAI:
    import openai

    base_url, api_key, timeout = key
    add_secret(api_key)
    return openai.OpenAI(api_key=api_key, base_url=base_url, timeout=timeout, max_retries=0)


def _key(settings: Settings, credentials: Credentials) -> _Key:
    base_url = settings.effective_base_url()
    if not base_url:
        raise ProviderError("No server URL is set. Enter the server's URL in the settings.")
    return base_url, credentials.api_key() or NO_API_KEY, settings.request_timeout


class OpenAIClients:
    """One client per server, key and timeout, reused by every turn and embedder; `close`
    closes them all (a client of earlier settings may still serve a running turn until then).
    """

    def __init__(self) -> None:
        self._clients: dict[_Key, openai.OpenAI] = {}
        self._closed = False
        self._lock = threading.Lock()

    def get(self, settings: Settings, credentials: Credentials) -> openai.OpenAI:
        """The client for what `settings` and `credentials` say now."""
        key = _key(settings, credentials)
        with self._lock:
            if self._closed:
                raise ProviderError("The data directory was closed.")
            client = self._clients.get(key)
            if client is None:
                client = self._clients[key] = _build(key)  # the key is read once
            return client

    def close(self) -> None:
        """Close every client's connections."""
        with self._lock:
            self._closed = True
            clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            client.close()
