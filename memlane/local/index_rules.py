"""Which of memlane's indexing rules a data directory's search index was built by.

Where memlane changed how it indexes, an index built before the change keeps working but is not
what a new one would be; each such change is an `IndexRule`, recorded in the `meta` table once the
whole index follows it: when the index is empty at open (every row will be written by the current
rule) and after `memlane reindex` wrote every document again. Until then the server says at start
to run `memlane reindex`; it does not rebuild on its own (re-embedding every memory takes minutes
to hours on a laptop, and recall keeps working meanwhile).
"""

from __future__ import annotations

from dataclasses import dataclass

from memlane.adapters.local.sqlite_db import SqliteDatabase
from memlane.documents.contextual import CONTEXT_SCHEME


@dataclass(frozen=True)
class IndexRule:
    key: str  # its `meta` key
    current: str  # the value that says the index follows the current rule
    hint: str  # what the server says at start while it does not

    def settle_on_open(self, db: SqliteDatabase) -> None:
        """A directory whose index is empty follows the current rule from its first save on."""
        if db.get_meta(self.key) is None and _indexed_chunks(db) == 0:
            db.set_meta(self.key, self.current)

    def stale(self, db: SqliteDatabase) -> bool:
        """Whether the index may hold rows written by an earlier rule."""
        value = db.get_meta(self.key)
        if value == self.current:
            return False
        return value is not None or _indexed_chunks(db) > 0

    def mark_current(self, db: SqliteDatabase) -> None:
        """After every document was written again (`memlane reindex`)."""
        db.set_meta(self.key, self.current)


# Contextual indexing (memlane.documents.contextual): indexes built before the conversation signal
# gave a short memory the words (and a share of the vector) of whatever was saved within 30 minutes
# of it in its project, so unrelated notes carry each other.
CONTEXT = IndexRule(
    "context_scheme", CONTEXT_SCHEME,
    "the search index was built before memories needed a conversation_id to be indexed with their "
    "neighbours: notes saved close together carry each other's words; run: memlane reindex")
# Each row's kind (memlane.ports.IndexedChunk.kind), which recall's `filters.kind` applies inside both
# search legs. Rows written before have none: they pass every kind filter and recall drops those of
# another kind after ranking, so the answer stays exact but a page of facts can come up short.
KINDS = IndexRule(
    "index_kinds", "1",
    "the search index was built before it held each memory's kind: a recall filtered by kind (facts, "
    "messages) stays exact but may return fewer results than its limit; run: memlane reindex")
RULES = (CONTEXT, KINDS)


def _indexed_chunks(db: SqliteDatabase) -> int:
    return int(db.connection().execute("SELECT COUNT(*) FROM search_rows").fetchone()[0])


def settle_on_open(db: SqliteDatabase) -> None:
    for rule in RULES:
        rule.settle_on_open(db)


def stale(db: SqliteDatabase) -> list[IndexRule]:
    """The rules the index does not follow yet."""
    return [rule for rule in RULES if rule.stale(db)]


def mark_current(db: SqliteDatabase) -> None:
    for rule in RULES:
        rule.mark_current(db)
