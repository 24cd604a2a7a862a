"""Chunk records on SQLite (memlane.ports.ChunkStore): one row per chunk, its body as JSON."""

from __future__ import annotations

from collections.abc import Sequence

from memlane.adapters.local.metadata.base import SqliteTables, placeholders
from memlane.domain.errors import IdTakenError
from memlane.domain.models import Chunk


class SqliteChunkStore(SqliteTables):
    """ChunkStore on SQLite."""

    def put_chunks(self, org_id: str, document_id: str, chunks: Sequence[Chunk]) -> None:
        """The document's chunk records, replaced as a whole; chunk ids another organization holds
        are refused (IdTakenError) and its records left as they were (`chunks.id` is the key alone)."""
        with self.db.transaction() as conn:
            ids = [c.id for c in chunks]
            for start in range(0, len(ids), 500):
                part = ids[start : start + 500]
                taken = conn.execute(
                    f"SELECT id FROM chunks WHERE id IN ({placeholders(len(part))}) AND organization_id != ? LIMIT 1",
                    (*part, org_id),
                ).fetchone()
                if taken is not None:
                    raise IdTakenError(f"chunk id {taken['id']} is not available")
            conn.execute(
                "DELETE FROM chunks WHERE organization_id = ? AND document_id = ?", (org_id, document_id)
            )
            conn.executemany(
                "INSERT OR REPLACE INTO chunks (id, document_id, organization_id, project_id, body)"
                " VALUES (?,?,?,?,?)",
                [(c.id, c.document_id, c.organization_id, c.project_id, c.model_dump_json()) for c in chunks],
            )

    def get_chunks(self, org_id: str, document_id: str) -> list[Chunk]:
        rows = (
            self.db.connection()
            .execute(
                "SELECT body FROM chunks WHERE organization_id = ? AND document_id = ?", (org_id, document_id)
            )
            .fetchall()
        )
        chunks = [Chunk.model_validate_json(r["body"]) for r in rows]
        return sorted(chunks, key=lambda c: c.chunk_index)

    def get_chunks_by_id(self, org_id: str, chunk_ids: Sequence[str]) -> list[Chunk]:
        if not chunk_ids:
            return []
        rows = (
            self.db.connection()
            .execute(
                f"SELECT body FROM chunks WHERE organization_id = ? AND id IN ({placeholders(len(chunk_ids))})",
                (org_id, *chunk_ids),
            )
            .fetchall()
        )
        return [Chunk.model_validate_json(r["body"]) for r in rows]
