"""A real HTTP server on loopback that speaks enough of the OpenAI API for the `openai` client.

Tests script it reply by reply; each scripted reply can also inject a fault (a delay, an HTTP error,
a dropped connection, a malformed stream line), so a test can make one call fail and the retry pass:

    with FakeOpenAI() as fake:
        fake.enqueue(Reply.error(429, retry_after=0.05), Reply.text("hello"))
        client = fake.client(max_retries=1)
        client.chat.completions.create(model="m", messages=[...])  # retried, answers "hello"
        assert len(fake.requests) == 2

When nothing is queued the server echoes the last user message. Embeddings are a hashed bag of
words, so texts that share words are close.

It can also behave like the local servers people run: `context_window` makes prompts that are
too long fail with llama.cpp's or OpenAI's wording (`overflow_style`) and, with `context_info`,
tells the window on llama.cpp's `/props`, LM Studio's `/api/v0/models`, Ollama's `/api/show` or
vLLM's `/v1/models`; `stream_tool_choice=False` answers a streamed request with `tool_choice`
with an empty HTTP 200 (llama-cpp-python's chatml-function-calling); `token_embeddings` returns
one vector per word instead of one per input; `max_tokens` cuts replies with "length"; `slots`
serves that many chat answers at a time (llama.cpp's `--parallel`), the others wait for a slot;
`accepts_images=False` refuses a request with an image part as OpenAI does for a text-only model,
and `text_only` names models that refuse one (others take it) in the words of `images_style`
(OpenAI, llama.cpp without its mmproj, Ollama or LM Studio).

`python -m tests.fake_openai --port 8765` runs it by hand, with a `remember` tool call whenever
the user says "remember".
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import hashlib
import itertools
import json
import math
import re
import socket
import struct
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Literal, Self

import openai

JsonDict = dict[str, Any]

DEFAULT_MODELS = ("fake-chat", "fake-embed")
DEFAULT_DIM = 64
# OpenAI's words for an image sent to a model that takes none.
IMAGES_REFUSED = "Invalid content type. image_url is only supported by certain models."
ImagesStyle = Literal["openai", "llama.cpp", "ollama", "lmstudio"]
# How servers refuse an image part for a model without vision: status and body, as they send it.
IMAGES_REFUSALS: dict[str, tuple[int, JsonDict]] = {
    "openai": (
        400,
        {"error": {"message": IMAGES_REFUSED, "type": "invalid_request_error", "param": None,
                   "code": None}},
    ),
    "llama.cpp": (
        500,
        {"error": {"code": 500, "type": "server_error", "message": "image input is not "
                   "supported - hint: if this is unexpected, you may need to provide the mmproj"}},
    ),
    "ollama": (
        400,
        {"error": {"message": "registry.ollama.ai/library/llama3:latest does not support images",
                   "type": "api_error", "param": None, "code": None}},
    ),
    "lmstudio": (400, {"error": "Model does not support images. Please use a model that does."}),
}  # fmt: skip
MALFORMED_SSE_LINE = b'data: {"id": "broken", "choices": [\n\n'

# OpenAI's error `type` and `code` for the statuses tests use.
_ERROR_KINDS: dict[int, tuple[str, str | None, str]] = {
    400: ("invalid_request_error", None, "Invalid request."),
    401: ("invalid_request_error", "invalid_api_key", "Incorrect API key provided."),
    403: ("invalid_request_error", "unsupported_country_region_territory", "Forbidden."),
    404: ("invalid_request_error", "model_not_found", "The model does not exist."),
    429: ("requests", "rate_limit_exceeded", "Rate limit reached. Please try again later."),
    500: ("server_error", None, "The server had an error while processing your request."),
    503: ("server_error", "overloaded", "The engine is currently overloaded."),
}


@dataclass(frozen=True)
class ToolCall:
    """A function call in a scripted reply; `arguments` is the raw JSON string (may be invalid)."""

    name: str
    arguments: str = "{}"
    id: str | None = None  # generated as call_<n> when None


@dataclass(frozen=True)
class Reply:
    """A scripted reply: text and/or tool calls, plus optional faults.

    Faults: `delay` before answering; `chunk_delay` between stream chunks; `status` >= 400 answers
    with an OpenAI-style error body (`error_message`, `error_type`, `error_code`) and a
    `Retry-After` header when `retry_after` is set; `drop_after` closes the connection after that
    many stream chunks (0: before any; for a non-streamed request: no response at all);
    `malformed_after` sends a line that is not JSON after that many chunks; `stall_after` goes
    silent after that many chunks; `raw_body` replaces the whole response body (`status` and
    `content_type` still apply).
    """

    content: str | None = None
    calls: tuple[ToolCall, ...] = ()
    finish_reason: str | None = None  # "tool_calls" when there are calls, else "stop"
    usage: JsonDict | None = None  # computed from word counts when None
    delay: float = 0.0
    chunk_delay: float = 0.0
    status: int = 200
    error_message: str | None = None
    error_type: str | None = None
    error_code: str | None = None
    retry_after: float | None = None
    drop_after: int | None = None
    malformed_after: int | None = None
    raw_body: str | bytes | None = None
    content_type: str = "application/json"
    stall_after: int | None = None

    @classmethod
    def text(cls, content: str, **faults: Any) -> Reply:
        """An assistant message with `content`; `faults` are any of the fault fields."""
        return cls(content=content, **faults)

    @classmethod
    def tool_calls(cls, *calls: ToolCall, content: str | None = None, **faults: Any) -> Reply:
        """An assistant message that calls tools, optionally after some text."""
        return cls(content=content, calls=calls, **faults)

    @classmethod
    def error(
        cls,
        status: int,
        message: str | None = None,
        *,
        retry_after: float | None = None,
        type: str | None = None,
        code: str | None = None,
        delay: float = 0.0,
    ) -> Reply:
        """An HTTP error with an OpenAI-style body; 429 / 5xx are what the client retries."""
        return cls(
            status=status,
            error_message=message,
            error_type=type,
            error_code=code,
            retry_after=retry_after,
            delay=delay,
        )

    @classmethod
    def raw(
        cls, body: str | bytes, *, status: int = 200, content_type: str = "application/json"
    ) -> Reply:
        """Answer with exactly `body`, e.g. something that is not a valid API response."""
        return cls(raw_body=body, status=status, content_type=content_type)

    @classmethod
    def dropped(cls) -> Reply:
        """Close the connection without answering."""
        return cls(drop_after=0)

    @classmethod
    def stalled(cls, content: str, after: int) -> Reply:
        """Stream `after` chunks of `content`, then go silent (until the server stops)."""
        return cls(content=content, stall_after=after)


OverflowStyle = Literal["llama.cpp", "openai"]
ContextInfo = Literal["props", "lmstudio", "ollama", "vllm"]


def overflow_message(style: OverflowStyle, tokens: int, window: int) -> str:
    """The error text a server of `style` gives for a prompt of `tokens` in a `window`."""
    if style == "llama.cpp":
        return f"Requested tokens ({tokens}) exceed context window of {window}"
    return (
        f"This model's maximum context length is {window} tokens. However, your messages "
        f"resulted in {tokens} tokens. Please reduce the length of the messages."
    )


ReplyFunction = Callable[[JsonDict], "Reply | str"]
ScriptedReply = Reply | str | ReplyFunction


@dataclass(frozen=True)
class RecordedRequest:
    """One request the server received; `body` is the parsed JSON (None when absent or invalid)."""

    method: str
    path: str
    headers: dict[str, str]  # lower-case names
    body: Any


# --- helpers that build OpenAI objects ---------------------------------------------------------

_WORD = re.compile(r"[a-z0-9]+")


def tokenize(text: str) -> list[str]:
    """Lower-case runs of letters and digits."""
    return _WORD.findall(text.lower())


def hashed_embedding(text: str, dim: int = DEFAULT_DIM) -> list[float]:
    """A unit vector from a signed hashed bag of words; shared words mean a high cosine."""
    vector = [0.0] * dim
    for token in tokenize(text) or [""]:
        digest = int.from_bytes(hashlib.blake2b(token.encode(), digest_size=8).digest(), "little")
        vector[digest % dim] += 1.0 if (digest >> 63) & 1 else -1.0
    norm = math.sqrt(sum(x * x for x in vector))
    return [x / norm for x in vector]


def message_text(message: JsonDict) -> str:
    """The text of a chat message whose content is a string or a list of parts."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def _has_image(request: JsonDict) -> bool:
    """Whether a chat request's messages hold an `image_url` part."""
    return any(
        isinstance(part, dict) and part.get("type") == "image_url"
        for message in request.get("messages") or []
        if isinstance(message, dict) and isinstance(message.get("content"), list)
        for part in message["content"]
    )


def last_user_text(request: JsonDict) -> str:
    """The text of the last user message of a chat request, or ''."""
    for message in reversed(request.get("messages") or []):
        if isinstance(message, dict) and message.get("role") == "user":
            return message_text(message)
    return ""


def echo_reply(request: JsonDict) -> Reply:
    """The default reply: echo the last user message."""
    text = last_user_text(request)
    return Reply.text(f"Echo: {text}" if text else "Hello from the fake OpenAI server.")


def _count_tokens(text: str) -> int:
    return len(re.findall(r"\w+|[^\w\s]", text))


def prompt_tokens(request: JsonDict) -> int:
    """The tokens of a chat request's messages and tools, as this server counts them."""
    messages = [m for m in request.get("messages") or [] if isinstance(m, dict)]
    tools = json.dumps(request.get("tools")) if request.get("tools") else ""
    return sum(_count_tokens(message_text(m)) + 3 for m in messages) + _count_tokens(tools)


def cut_to(reply: Reply, max_tokens: int) -> Reply:
    """`reply` cut to `max_tokens` tokens of text, finishing with "length" if it was longer."""
    pieces = re.findall(r"\s*(?:\w+|[^\w\s])", reply.content or "")
    if len(pieces) <= max_tokens or reply.calls:
        return reply
    return replace(reply, content="".join(pieces[:max_tokens]), finish_reason="length")


def _error_body(status: int, message: str | None, type_: str | None, code: str | None) -> JsonDict:
    default_type, default_code, default_message = _ERROR_KINDS.get(
        status, ("invalid_request_error", None, HTTPStatus(status).phrase)
    )
    return {
        "error": {
            "message": message or default_message,
            "type": type_ or default_type,
            "param": None,
            "code": code or default_code,
        }
    }


def _split_text(text: str) -> list[str]:
    """Word-sized stream pieces, each keeping the whitespace before it."""
    return re.findall(r"\s*\S+", text)


def _split_arguments(arguments: str, size: int = 8) -> list[str]:
    return [arguments[i : i + size] for i in range(0, len(arguments), size)]


def _usage(request: JsonDict, reply: Reply) -> JsonDict:
    prompt = prompt_tokens(request)
    completion = _count_tokens(reply.content or "") + sum(
        _count_tokens(c.name + c.arguments) for c in reply.calls
    )
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def stream_chunks(
    request: JsonDict,
    reply: Reply,
    *,
    calls: list[tuple[ToolCall, str]],
    completion_id: str,
    usage: JsonDict | None,
) -> list[JsonDict]:
    """The `chat.completion.chunk` objects of a streamed reply, split the way OpenAI splits them."""
    created = int(time.time())
    finish_reason = reply.finish_reason or ("tool_calls" if calls else "stop")

    def chunk(delta: JsonDict, finish: str | None = None) -> JsonDict:
        return {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": request["model"],
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}],
        }

    chunks = [chunk({"role": "assistant", "content": ""})]
    chunks += [chunk({"content": piece}) for piece in _split_text(reply.content or "")]
    for index, (call, call_id) in enumerate(calls):
        first = {"index": index, "id": call_id, "type": "function"}
        first["function"] = {"name": call.name, "arguments": ""}
        chunks.append(chunk({"tool_calls": [first]}))
        chunks += [
            chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
            for piece in _split_arguments(call.arguments)
        ]
    chunks.append(chunk({}, finish_reason))
    if usage is not None:
        chunks.append({**chunk({}), "choices": [], "usage": usage})
    return chunks


# --- the server ---------------------------------------------------------------------------------


class FakeOpenAI:
    """An OpenAI-compatible server on 127.0.0.1 with a queue of scripted replies; thread-safe.

    Use as a context manager (or `start()` / `stop()`). `enqueue()` scripts chat completions,
    `enqueue_embeddings()` scripts faults for `/v1/embeddings` (their text is ignored). With
    `required_api_key` every request needs `Authorization: Bearer <key>` or gets a 401; with
    `models` set, requests for any other model get a 404 `model_not_found`. The local-server
    behaviours are in the module docstring.
    """

    def __init__(
        self,
        *,
        port: int = 0,
        required_api_key: str | None = None,
        models: Sequence[str] | None = None,
        embedding_dim: int = DEFAULT_DIM,
        default_reply: Callable[[JsonDict], Reply] = echo_reply,
        verbose: bool = False,
        context_window: int | None = None,
        overflow_style: OverflowStyle = "llama.cpp",
        context_info: ContextInfo | None = None,
        stream_tool_choice: bool = True,
        token_embeddings: bool = False,
        slots: int | None = None,
        accepts_images: bool = True,
        text_only: Sequence[str] = (),
        images_style: ImagesStyle = "openai",
    ) -> None:
        self.accepts_images = accepts_images
        self.text_only = frozenset(text_only)
        self.images_style = images_style
        self.context_window = context_window
        # Like llama.cpp with `--parallel N`: at most `slots` chat answers at once, the others
        # wait; an answer whose client went away frees its slot at its next chunk.
        self._slots = threading.Semaphore(slots) if slots else None
        self.abandoned: list[JsonDict] = []  # chat requests whose client left mid-answer
        self.overflow_style = overflow_style
        self.context_info = context_info
        self.stream_tool_choice = stream_tool_choice
        self.token_embeddings = token_embeddings
        self.required_api_key = required_api_key
        self.models = tuple(models) if models is not None else None
        self.embedding_dim = embedding_dim
        self.default_reply = default_reply
        self.verbose = verbose
        self._port = port
        self._lock = threading.Lock()
        self._chat_queue: deque[ScriptedReply] = deque()
        self._embedding_queue: deque[ScriptedReply] = deque()
        self._requests: list[RecordedRequest] = []
        self._ids = itertools.count(1)
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._http_clients: list[openai.DefaultHttpxClient] = []

    # lifecycle

    def start(self) -> Self:
        """Bind and serve in a background thread."""
        if self._server is not None:
            return self
        self._server = _Server(("127.0.0.1", self._port), _Handler, self)
        self._port = int(self._server.server_address[1])
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.01},
            name="fake-openai",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close every open connection; sleeping handlers wake up."""
        server, self._server = self._server, None
        if server is None:
            return
        server.stopping.set()
        with self._lock:
            http_clients, self._http_clients = self._http_clients, []
        for http_client in http_clients:
            http_client.close()
        server.shutdown()
        server.close_connections()
        server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def port(self) -> int:
        """The bound port; still known after `stop()`, so tests can try a server that is down."""
        if not self._port:
            raise RuntimeError("FakeOpenAI has not been started")
        return self._port

    @property
    def base_url(self) -> str:
        """The URL to give the client, e.g. http://127.0.0.1:PORT/v1."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def api_key(self) -> str:
        """A key the server accepts."""
        return self.required_api_key or "sk-fake"

    def client(self, *, max_retries: int = 0, timeout: float = 5.0, **kwargs: Any) -> openai.OpenAI:
        """An `openai.OpenAI` client for this server; no retries unless asked.

        It gets an HTTP client without certificate loading (50 ms per client otherwise; the server
        is plain http anyway), closed by `stop()`.
        """
        if "http_client" not in kwargs:
            kwargs["http_client"] = openai.DefaultHttpxClient(verify=False)
            with self._lock:
                self._http_clients.append(kwargs["http_client"])
        kwargs.setdefault("api_key", self.api_key)
        return openai.OpenAI(
            base_url=self.base_url, max_retries=max_retries, timeout=timeout, **kwargs
        )

    # scripting

    def enqueue(self, *replies: ScriptedReply) -> None:
        """Queue chat completion replies: a `Reply`, a string, or a function of the request."""
        with self._lock:
            self._chat_queue.extend(replies)

    def enqueue_embeddings(self, *replies: ScriptedReply) -> None:
        """Queue faults for the next embedding requests (only the fault fields are used)."""
        with self._lock:
            self._embedding_queue.extend(replies)

    @property
    def pending(self) -> int:
        """Scripted replies not used yet (chat and embeddings)."""
        with self._lock:
            return len(self._chat_queue) + len(self._embedding_queue)

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far, oldest first (a copy)."""
        with self._lock:
            return list(self._requests)

    def requests_to(self, path: str) -> list[RecordedRequest]:
        """The requests whose path ends with `path`, e.g. "/chat/completions"."""
        return [r for r in self.requests if r.path.endswith(path)]

    def clear_requests(self) -> None:
        """Forget the recorded requests."""
        with self._lock:
            self._requests.clear()

    # used by the handler

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(request)

    def _next_reply(self, queue_name: str, request: JsonDict) -> Reply | None:
        with self._lock:
            queue = self._chat_queue if queue_name == "chat" else self._embedding_queue
            scripted = queue.popleft() if queue else None
        if scripted is None:
            return None
        if callable(scripted):
            scripted = scripted(request)
        return Reply.text(scripted) if isinstance(scripted, str) else scripted

    def _new_id(self, prefix: str) -> str:
        with self._lock:
            return f"{prefix}{next(self._ids)}"


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(
        self,
        address: tuple[str, int],
        handler: type[BaseHTTPRequestHandler],
        fake: FakeOpenAI,
    ) -> None:
        self.fake = fake
        self.stopping = threading.Event()
        self.connections: set[socket.socket] = set()
        self.connections_lock = threading.Lock()
        super().__init__(address, handler)

    def close_connections(self) -> None:
        with self.connections_lock:
            connections = list(self.connections)
        for connection in connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that gave up (timeout, closed stream) is normal here, not worth a traceback.
        if not isinstance(sys.exc_info()[1], ConnectionError | TimeoutError) or self.fake.verbose:
            super().handle_error(request, client_address)


class _DroppedError(Exception):
    """The scripted reply asked to drop the connection."""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    @property
    def fake(self) -> FakeOpenAI:
        return self.server.fake

    def setup(self) -> None:
        super().setup()
        with self.server.connections_lock:
            self.server.connections.add(self.connection)

    def finish(self) -> None:
        with self.server.connections_lock:
            self.server.connections.discard(self.connection)
        super().finish()

    def log_message(self, format: str, *args: Any) -> None:
        if self.fake.verbose:
            super().log_message(format, *args)

    # routing

    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")

    def _handle(self, method: str) -> None:
        path = self.path.split("?", 1)[0]
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = None
        headers = {name.lower(): value for name, value in self.headers.items()}
        self.fake._record(RecordedRequest(method, path, headers, body))
        try:
            if not self._authorized():
                self._send_error(Reply.error(401))
            elif raw and body is None:
                self._send_error(Reply.error(400, "We could not parse the JSON body."))
            elif (method, path) == ("POST", "/v1/chat/completions"):
                self._chat_in_slot(body if isinstance(body, dict) else {})
            elif (method, path) == ("POST", "/v1/embeddings"):
                self._embeddings(body if isinstance(body, dict) else {})
            elif (method, path) == ("GET", "/v1/models"):
                self._send_json(200, {"object": "list", "data": self._model_objects()})
            elif self._context_info(method, path, body):
                pass
            elif method == "GET" and path.startswith("/v1/models/"):
                self._model(path.removeprefix("/v1/models/"))
            else:
                self._send_error(Reply.error(404, f"Unknown request URL: {method} {path}."))
        except _DroppedError:
            self._drop()
        except (ConnectionError, TimeoutError):
            self.close_connection = True

    def _authorized(self) -> bool:
        key = self.fake.required_api_key
        return key is None or self.headers.get("Authorization") == f"Bearer {key}"

    def _model_objects(self) -> list[JsonDict]:
        extra = {}
        if self.fake.context_info == "vllm" and self.fake.context_window:
            extra = {"max_model_len": self.fake.context_window}
        return [
            {"id": name, "object": "model", "created": 1700000000, "owned_by": "fake", **extra}
            for name in self.fake.models or DEFAULT_MODELS
        ]

    def _context_info(self, method: str, path: str, body: Any) -> bool:
        """Answer a server's own info endpoint, if this server plays that server; True if so."""
        window, style = self.fake.context_window, self.fake.context_info
        if window is None:
            return False
        if style == "props" and (method, path) == ("GET", "/props"):
            self._send_json(200, {"default_generation_settings": {"n_ctx": window}})
        elif style == "lmstudio" and method == "GET" and path.startswith("/api/v0/models/"):
            model = path.removeprefix("/api/v0/models/")
            info = {"id": model, "max_context_length": 4 * window}
            self._send_json(200, {**info, "loaded_context_length": window})
        elif style == "ollama" and (method, path) == ("POST", "/api/show"):
            parameters = f'stop "<|im_end|>"\nnum_ctx {window}'
            info = {"general.architecture": "llama", "llama.context_length": 4 * window}
            self._send_json(200, {"parameters": parameters, "model_info": info, "body": body})
        else:
            return False
        return True

    def _model(self, name: str) -> None:
        for model in self._model_objects():
            if model["id"] == name:
                self._send_json(200, model)
                return
        self._send_error(self._model_not_found(name))

    def _check_model(self, request: JsonDict) -> Reply | None:
        model = request.get("model")
        if not isinstance(model, str) or not model:
            return Reply.error(400, "you must provide a model parameter", code="missing_model")
        if self.fake.models is not None and model not in self.fake.models:
            return self._model_not_found(model)
        return None

    @staticmethod
    def _model_not_found(name: str) -> Reply:
        return Reply.error(
            404, f"The model `{name}` does not exist or you do not have access to it."
        )

    # chat completions

    def _chat_in_slot(self, request: JsonDict) -> None:
        slots = self.fake._slots
        if slots is None:
            self._chat(request)
            return
        with slots:
            try:
                self._chat(request)
            except (ConnectionError, TimeoutError):
                with self.fake._lock:
                    self.fake.abandoned.append(request)
                raise

    def _chat(self, request: JsonDict) -> None:
        error = self._check_model(request)
        if error is None and not isinstance(request.get("messages"), list):
            error = Reply.error(400, "'messages' is a required property")
        if error is not None:
            self._send_error(error)
            return
        stream = bool(request.get("stream"))
        if stream and request.get("tool_choice") and not self.fake.stream_tool_choice:
            # llama-cpp-python: "Automatic streaming tool choice is not supported", as an empty 200
            self._send_bytes(200, b"", "text/event-stream")
            return
        refuses = not self.fake.accepts_images or request.get("model") in self.fake.text_only
        if refuses and _has_image(request):
            status, body = IMAGES_REFUSALS[self.fake.images_style]
            self._send_json(status, body)
            return
        if self._overflows(request, stream):
            return
        reply = self.fake._next_reply("chat", request) or self.fake.default_reply(request)
        if self._faults(reply, stream=stream):
            return
        max_tokens = request.get("max_tokens") or request.get("max_completion_tokens")
        if isinstance(max_tokens, int):
            reply = cut_to(reply, max_tokens)
        calls = [(call, call.id or self.fake._new_id("call_")) for call in reply.calls]
        completion_id = self.fake._new_id("chatcmpl-fake-")
        usage: JsonDict | None = reply.usage or _usage(request, reply)
        if request.get("stream"):
            if not (request.get("stream_options") or {}).get("include_usage"):
                usage = None
            events = stream_chunks(
                request, reply, calls=calls, completion_id=completion_id, usage=usage
            )
            self._stream(reply, events)
            return
        message: JsonDict = {"role": "assistant", "content": reply.content, "refusal": None}
        if calls:
            message["tool_calls"] = [
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments},
                }
                for call, call_id in calls
            ]
        self._send_json(
            200,
            {
                "id": completion_id,
                "object": "chat.completion",
                "created": int(time.time()),
                "model": request["model"],
                "choices": [
                    {
                        "index": 0,
                        "message": message,
                        "finish_reason": reply.finish_reason or ("tool_calls" if calls else "stop"),
                        "logprobs": None,
                    }
                ],
                "usage": usage,
            },
        )

    def _overflows(self, request: JsonDict, stream: bool) -> bool:
        """Refuse a prompt longer than the context window, as the server style does; True if so."""
        window = self.fake.context_window
        tokens = prompt_tokens(request)
        if window is None or tokens <= window:
            return False
        message = overflow_message(self.fake.overflow_style, tokens, window)
        if self.fake.overflow_style == "llama.cpp" and stream:
            # llama-cpp-python fails inside the event stream: 200, then the connection is cut.
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream; charset=utf-8")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            raise _DroppedError
        if self.fake.overflow_style == "llama.cpp":
            self._send_error(Reply.error(400, message))
        else:
            self._send_error(Reply.error(400, message, code="context_length_exceeded"))
        return True

    def _stream(self, reply: Reply, events: list[JsonDict]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for sent, event in enumerate(events):
            if sent and reply.chunk_delay:
                self.server.stopping.wait(reply.chunk_delay)
            if reply.malformed_after == sent:
                self._write_chunk(MALFORMED_SSE_LINE)
            if reply.drop_after == sent:
                raise _DroppedError
            if reply.stall_after == sent:
                self.server.stopping.wait()
                return
            self._write_chunk(f"data: {json.dumps(event)}\n\n".encode())
        self._write_chunk(b"data: [DONE]\n\n")
        self._write_chunk(b"")  # the last chunk of the chunked encoding

    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    # embeddings

    def _embeddings(self, request: JsonDict) -> None:
        error = self._check_model(request)
        given = request.get("input")
        texts: Any = [given] if isinstance(given, str) else given
        if error is None and (
            not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts)
        ):
            error = Reply.error(400, "'input' must be a string or a non-empty list of strings")
        if error is None and "" in texts:
            error = Reply.error(400, "'$.input' is invalid: empty strings are not allowed")
        if error is not None:
            self._send_error(error)
            return
        reply = self.fake._next_reply("embeddings", request)
        if reply is not None and self._faults(reply, stream=False):
            return
        dim = request.get("dimensions") or self.fake.embedding_dim
        as_base64 = request.get("encoding_format") == "base64"
        data = []
        for index, text in enumerate(texts):
            vector = hashed_embedding(text, dim)
            embedding: Any = (
                base64.b64encode(struct.pack(f"<{dim}f", *vector)).decode() if as_base64 else vector
            )
            if self.fake.token_embeddings:  # llama.cpp without pooling: one vector per token
                embedding = [hashed_embedding(word, dim) for word in tokenize(text) or [""]]
            data.append({"object": "embedding", "index": index, "embedding": embedding})
        tokens = sum(len(tokenize(t)) for t in texts)
        self._send_json(
            200,
            {
                "object": "list",
                "data": data,
                "model": request["model"],
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            },
        )

    # faults and plain responses

    def _faults(self, reply: Reply, *, stream: bool) -> bool:
        """Apply the reply's delay and any fault that replaces the answer; True if answered."""
        if reply.delay:
            self.server.stopping.wait(reply.delay)
        if reply.raw_body is not None:
            body = reply.raw_body.encode() if isinstance(reply.raw_body, str) else reply.raw_body
            self._send_bytes(reply.status, body, reply.content_type)
            return True
        if reply.status >= 400:
            self._send_error(reply)
            return True
        if reply.drop_after is not None and not stream:
            raise _DroppedError
        return False

    def _send_error(self, reply: Reply) -> None:
        headers = {}
        if reply.retry_after is not None:
            headers["Retry-After"] = f"{reply.retry_after:g}"
        body = _error_body(reply.status, reply.error_message, reply.error_type, reply.error_code)
        self._send_json(reply.status, body, headers)

    def _send_json(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        self._send_bytes(status, json.dumps(body).encode(), "application/json", headers)

    def _send_bytes(
        self,
        status: int,
        body: bytes,
        content_type: str,
        headers: dict[str, str] | None = None,
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("x-request-id", self.fake._new_id("req_"))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()

    def _drop(self) -> None:
        self.close_connection = True
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


# --- standalone ---------------------------------------------------------------------------------


def demo_reply(request: JsonDict) -> Reply:
    """For trying the app by hand: echo, and call `remember` when the user says "remember"."""
    messages = [m for m in request.get("messages") or [] if isinstance(m, dict)]
    if messages and messages[-1].get("role") == "tool":
        return Reply.text("Done, I will remember that.")
    text = last_user_text(request)
    tool_names = {
        (tool.get("function") or {}).get("name")
        for tool in request.get("tools") or []
        if isinstance(tool, dict)
    }
    if "remember" in text.lower() and (not tool_names or "remember" in tool_names):
        fact = re.sub(r"^.*?\bremember\b(\s+that)?[\s:,]*", "", text, count=1, flags=re.I)
        arguments = {"text": fact.strip() or text, "kind": "fact", "importance": 0.6}
        return Reply.tool_calls(ToolCall("remember", json.dumps(arguments)))
    return echo_reply(request)


def main(argv: Sequence[str] | None = None) -> None:
    """Run the fake server until interrupted."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--api-key", help="require this API key")
    parser.add_argument("--dim", type=int, default=DEFAULT_DIM, help="embedding size")
    parser.add_argument("--context-window", type=int, help="refuse longer prompts, as llama.cpp")
    parser.add_argument(
        "--no-stream-tool-choice",
        action="store_true",
        help="an empty 200 for streamed requests with tool_choice, as llama-cpp-python",
    )
    parser.add_argument(
        "--token-embeddings", action="store_true", help="one vector per word, as without pooling"
    )
    parser.add_argument(
        "--model",
        action="append",
        dest="models",
        help="offer this model (repeat it; default: fake-chat and fake-embed)",
    )
    parser.add_argument(
        "--text-only", action="append", default=[], help="a model that refuses images (repeat it)"
    )
    args = parser.parse_args(argv)
    fake = FakeOpenAI(
        port=args.port,
        required_api_key=args.api_key,
        embedding_dim=args.dim,
        default_reply=demo_reply,
        verbose=True,
        context_window=args.context_window,
        stream_tool_choice=not args.no_stream_tool_choice,
        token_embeddings=args.token_embeddings,
        models=args.models,
        text_only=args.text_only,
    )
    with fake:
        print(f"Fake OpenAI server at {fake.base_url} (Ctrl-C to stop)", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
