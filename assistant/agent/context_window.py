"""Ask a server how long its model's context window is: vLLM, llama.cpp, LM Studio, Ollama.

None of this is in the OpenAI API, so each server's own info endpoint is tried once; the answer
is the context the model runs with where the server tells it, else what it was trained for.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from typing import Any

import openai

from assistant.openai_errors import CLIENT_ERRORS

log = logging.getLogger(__name__)

PROBE_TIMEOUT = 5.0
# Ollama runs a model with this context unless the model file sets `num_ctx`.
OLLAMA_DEFAULT_CONTEXT = 4096
# Context fields of a /v1/models entry: vLLM, some proxies, llama.cpp's trained context.
_MODEL_FIELDS = ("max_model_len", "context_length", "context_window", "max_context_length")
_NUM_CTX = re.compile(r"^\s*num_ctx\s+(\d+)", re.M)


def probe_context_window(client: openai.OpenAI, model: str) -> int | None:
    """The context window of `model` as the server at `client.base_url` states it, if it does."""
    base = str(client.base_url).rstrip("/")
    root = base.removesuffix("/v1")
    quick = client.with_options(timeout=PROBE_TIMEOUT, max_retries=0)
    probes: tuple[Callable[[], int | None], ...] = (
        lambda: _from_model_list(_get(quick, f"{base}/models"), model),
        lambda: _from_llama_cpp(_get(quick, f"{root}/props")),
        lambda: _from_lm_studio(_get(quick, f"{root}/api/v0/models/{model}")),
        lambda: _from_ollama(_post(quick, f"{root}/api/show", {"model": model})),
    )
    for probe in probes:
        try:
            found = probe()
        except CLIENT_ERRORS as err:
            log.debug("Context probe failed: %s", err)
            continue
        if found is not None:
            return found
    return None


def _get(client: openai.OpenAI, url: str) -> Any:
    return client.get(url, cast_to=object)


def _post(client: openai.OpenAI, url: str, body: dict[str, Any]) -> Any:
    return client.post(url, body=body, cast_to=object)


def _positive(value: object) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    return None


def _from_model_list(listing: Any, model: str) -> int | None:
    for entry in listing.get("data") or []:
        if not isinstance(entry, dict) or entry.get("id") != model:
            continue
        for name in _MODEL_FIELDS:
            if (found := _positive(entry.get(name))) is not None:
                return found
        meta = entry.get("meta")
        if isinstance(meta, dict):
            return _positive(meta.get("n_ctx")) or _positive(meta.get("n_ctx_train"))
    return None


def _from_llama_cpp(props: Any) -> int | None:
    settings = props.get("default_generation_settings")
    found = _positive(settings.get("n_ctx")) if isinstance(settings, dict) else None
    return found or _positive(props.get("n_ctx"))


def _from_lm_studio(entry: Any) -> int | None:
    return _positive(entry.get("loaded_context_length")) or _positive(
        entry.get("max_context_length")
    )


def _from_ollama(show: Any) -> int | None:
    parameters = show.get("parameters")
    if isinstance(parameters, str) and (match := _NUM_CTX.search(parameters)):
        return int(match.group(1))
    info = show.get("model_info")
    if not isinstance(info, dict):
        return None
    trained = [_positive(v) for k, v in info.items() if k.endswith(".context_length")]
    known = [t for t in trained if t is not None]
    return min(known[0], OLLAMA_DEFAULT_CONTEXT) if known else None
