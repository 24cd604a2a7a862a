"""Whether a data directory's search index holds every chunk's kind (message, fact, memory).

The kind filter of recall (`filters.kind`) applies inside both search legs through each row's
`search_rows.kind` (memlane.ports.IndexedChunk.kind). Rows written by a memlane from before that
column have none: they pass every kind filter, and recall drops those of another kind after ranking,
so the answer stays exact but a page of facts among many older messages can come up short. The
`meta` table records that every row has its kind (`index_kinds`): set when the index is empty at
open (every row will be written with one) and by `memlane reindex`, which writes every document
again. Until then the server says at start to run `memlane reindex` (not on its own: re-embedding
every memory takes minutes to hours on a laptop, and recall keeps working meanwhile).
"""

from __future__ import annotations

from memlane.adapters.local.sqlite_db import SqliteDatabase

META_KEY = "index_kinds"
REINDEX_HINT = (
    "the search index was built before it held each memory's kind: a recall filtered by kind (facts, "
    "messages) stays exact but may return fewer results than its limit; run: memlane reindex"
)


def _indexed_chunks(db: SqliteDatabase) -> int:
    return int(db.connection().execute("SELECT COUNT(*) FROM search_rows").fetchone()[0])


def settle_on_open(db: SqliteDatabase) -> None:
    """A directory whose index is empty holds every row's kind from its first save on."""
    if db.get_meta(META_KEY) is None and _indexed_chunks(db) == 0:
        db.set_meta(META_KEY, "1")


def missing(db: SqliteDatabase) -> bool:
    """Whether the index may hold rows without a kind (written by an older memlane)."""
    return db.get_meta(META_KEY) is None and _indexed_chunks(db) > 0


def mark_current(db: SqliteDatabase) -> None:
    """After every document was written again (`memlane reindex`)."""
    db.set_meta(META_KEY, "1")
