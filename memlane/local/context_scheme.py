"""Which contextual-indexing rule built a data directory's search index (memlane.documents.contextual).

Indexes built before the conversation signal gave a short memory the words (and a share of the
vector) of whatever was saved within 30 minutes of it in its project: unrelated notes carry each
other. The `meta` table records the rule the index follows (`context_scheme`); a directory without
it that has indexed chunks was built by the old rule. The server does not rebuild it on its own
(re-embedding every memory takes minutes to hours on a laptop, and recall keeps working meanwhile):
it says so at start, and `memlane reindex` rebuilds the index and records the current rule.
"""

from __future__ import annotations

from memlane.adapters.local.sqlite_db import SqliteDatabase
from memlane.documents.contextual import CONTEXT_SCHEME

META_KEY = "context_scheme"
REINDEX_HINT = (
    "the search index was built before memories needed a conversation_id to be indexed with their "
    "neighbours: notes saved close together carry each other's words; run: memlane reindex"
)


def _indexed_chunks(db: SqliteDatabase) -> int:
    return int(db.connection().execute("SELECT COUNT(*) FROM search_rows").fetchone()[0])


def settle_on_open(db: SqliteDatabase) -> None:
    """A directory whose index is empty follows the current rule from its first save on."""
    if db.get_meta(META_KEY) is None and _indexed_chunks(db) == 0:
        db.set_meta(META_KEY, CONTEXT_SCHEME)


def stale(db: SqliteDatabase) -> bool:
    """Whether the index was built by another rule than the current one."""
    scheme = db.get_meta(META_KEY)
    if scheme == CONTEXT_SCHEME:
        return False
    return scheme is not None or _indexed_chunks(db) > 0


def mark_current(db: SqliteDatabase) -> None:
    """After every document was written again (`memlane reindex`)."""
    db.set_meta(META_KEY, CONTEXT_SCHEME)
