"""Embeddings this process computed recently, so one text is not embedded twice in a row.

Why: contextual indexing (memlane.documents.contextual) rebuilds the previous memory's index entry when
the next one is saved, and that rebuild asks for the previous memory's own embedding again, seconds
after the save that computed it; a retried write asks again for what its first attempt embedded.
The vectors are a pure function of (embedder id, text), so reusing one is exact.

One cache per embedder object (it goes with the object, so an embedder swapped in, as tests do,
starts empty), bounded (least recently used out), one lock, vectors kept as 64-bit arrays so a
hit returns exactly the floats the embedder returned (~3 KB each for MiniLM's 384 dimensions,
~6 MB when full). Keys carry the organization as well as the embedder id and the text: a cache
hit is never observable across tenants, not even as a faster save.
"""

from __future__ import annotations

import threading
import weakref
from array import array
from collections import OrderedDict
from collections.abc import Sequence

DEFAULT_ENTRIES = 2048


class RecentEmbeddings:
    def __init__(self, entries: int = DEFAULT_ENTRIES) -> None:
        self.entries = entries
        self._items: OrderedDict[str, array] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def key(organization_id: str, embedding_key_: str) -> str:
        return f"{organization_id}\n{embedding_key_}"

    def get(self, key: str) -> list[float] | None:
        with self._lock:
            vector = self._items.get(key)
            if vector is None:
                return None
            self._items.move_to_end(key)
            return vector.tolist()

    def put(self, key: str, vector: Sequence[float]) -> None:
        if self.entries <= 0:
            return
        with self._lock:
            self._items[key] = array("d", vector)
            self._items.move_to_end(key)
            while len(self._items) > self.entries:
                self._items.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


_BY_EMBEDDER: weakref.WeakKeyDictionary[object, RecentEmbeddings] = weakref.WeakKeyDictionary()
_BY_EMBEDDER_LOCK = threading.Lock()


def recent_embeddings(embedder: object) -> RecentEmbeddings | None:
    """The cache of `embedder`; None when the object cannot carry one (no weak references)."""
    with _BY_EMBEDDER_LOCK:
        try:
            cache = _BY_EMBEDDER.get(embedder)
            if cache is None:
                cache = _BY_EMBEDDER[embedder] = RecentEmbeddings()
        except TypeError:
            return None
        return cache


__all__ = ["DEFAULT_ENTRIES", "RecentEmbeddings", "recent_embeddings"]
