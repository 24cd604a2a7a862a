"""Documents on SQLite (memlane.ports.DocumentStore), conversations in order (the
`documents_conversation` index) and every document id (reindexing).
A document's tags are rows of `document_tags`; deleting a document removes its tags, its chunk
records and its queued jobs in the same transaction."""

from __future__ import annotations

import bisect
import json
import sqlite3
from collections.abc import Collection, Sequence
from datetime import datetime

from memlane.adapters.local.metadata.base import SqliteTables, placeholders
from memlane.adapters.local.sqlite_db import iso, parse_iso, parse_iso_required
from memlane.domain.errors import IdTakenError
from memlane.domain.models import ContentType, Document, DocumentStatus, MediaInfo, conversation_order
from memlane.ports import (
    DocumentPage,
    DocumentStats,
    RecallFilters,
    decode_cursor,
    encode_cursor,
)

DOC_COLUMNS = (
    "id, organization_id, project_id, user_id, title, content, summary, content_type, source_url, "
    "metadata, content_hash, updates_memory_id, forget_after, created_at, updated_at, last_accessed_at, "
    "status, status_reason, chunk_count, embedder, superseded_by, media, source_changed_at, "
    "conversation_id, message_index"
)


def row_to_document(row: sqlite3.Row) -> Document:
    return Document(
        id=row["id"],
        organization_id=row["organization_id"],
        project_id=row["project_id"],
        user_id=row["user_id"],
        title=row["title"],
        content=row["content"],
        summary=row["summary"],
        content_type=ContentType(row["content_type"]),
        source_url=row["source_url"],
        metadata=json.loads(row["metadata"]),
        content_hash=row["content_hash"],
        updates_memory_id=row["updates_memory_id"],
        forget_after=parse_iso(row["forget_after"]),
        created_at=parse_iso_required(row["created_at"]),
        updated_at=parse_iso_required(row["updated_at"]),
        last_accessed_at=parse_iso(row["last_accessed_at"]),
        status=DocumentStatus(row["status"]),
        status_reason=row["status_reason"],
        chunk_count=row["chunk_count"],
        embedder=row["embedder"],
        superseded_by=row["superseded_by"],
        media=MediaInfo.model_validate_json(row["media"]) if row["media"] else None,
        source_changed_at=parse_iso(row["source_changed_at"]),
        conversation_id=row["conversation_id"],
        message_index=row["message_index"],
    )


class SqliteDocumentStore(SqliteTables):
    """DocumentStore on SQLite."""

    def document_stats(self, org_id: str, since: datetime, apart: Collection[str] = ()) -> DocumentStats:
        apart_ids = list(dict.fromkeys(apart))
        in_apart = f"project_id IN ({placeholders(len(apart_ids))})" if apart_ids else "0"
        row = (
            self.db.connection()
            .execute(
                f"SELECT COALESCE(SUM(NOT ({in_apart})), 0) AS total,"
                f" COALESCE(SUM(NOT ({in_apart}) AND created_at >= ?), 0) AS recent,"
                f" COALESCE(SUM({in_apart}), 0) AS apart,"
                " COALESCE(SUM(LENGTH(CAST(content AS BLOB))), 0) AS bytes"
                " FROM documents WHERE organization_id = ?",
                (*apart_ids, *apart_ids, iso(since), *apart_ids, org_id),
            )
            .fetchone()
        )
        return DocumentStats(total=row["total"], created_since=row["recent"], content_bytes=row["bytes"],
                             apart_total=row["apart"])

    def put_document(self, doc: Document) -> None:
        """An upsert by id within the organization; an id another organization holds is refused
        (IdTakenError) and its document left as it was: `documents.id` is the primary key alone."""
        with self.db.transaction() as conn:
            holder = conn.execute("SELECT organization_id FROM documents WHERE id = ?", (doc.id,)).fetchone()
            if holder is not None and holder["organization_id"] != doc.organization_id:
                raise IdTakenError(f"document id {doc.id} is not available")
            conn.execute(
                f"INSERT OR REPLACE INTO documents ({DOC_COLUMNS}) VALUES ({placeholders(25)})",
                (
                    doc.id,
                    doc.organization_id,
                    doc.project_id,
                    doc.user_id,
                    doc.title,
                    doc.content,
                    doc.summary,
                    doc.content_type.value,
                    doc.source_url,
                    json.dumps(doc.metadata, default=str),
                    doc.content_hash,
                    doc.updates_memory_id,
                    iso(doc.forget_after),
                    iso(doc.created_at),
                    iso(doc.updated_at),
                    iso(doc.last_accessed_at),
                    doc.status.value,
                    doc.status_reason,
                    doc.chunk_count,
                    doc.embedder,
                    doc.superseded_by,
                    doc.media.model_dump_json() if doc.media else None,
                    iso(doc.source_changed_at),
                    doc.conversation_id,
                    doc.message_index,
                ),
            )
            conn.execute("DELETE FROM document_tags WHERE document_id = ?", (doc.id,))
            conn.executemany(
                "INSERT OR IGNORE INTO document_tags (document_id, organization_id, tag) VALUES (?,?,?)",
                [(doc.id, doc.organization_id, label) for label in doc.labels],
            )

    def add_document(self, doc: Document) -> Document | None:
        # BEGIN IMMEDIATE: the lookup and the insert under one write lock, so a racing save of the
        # same content waits for this one and then finds it
        with self.db.transaction():
            existing = self.find_document_by_hash(doc.organization_id, doc.project_id, doc.content_hash)
            if existing is not None and doc.content_hash:
                return existing
            self.put_document(doc)
        return None

    def conversation_messages(self, org_id: str, document_ids: Sequence[str]) -> set[str]:
        if not document_ids:
            return set()
        rows = self.db.connection().execute(
            f"SELECT id FROM documents WHERE +organization_id = ? AND conversation_id IS NOT NULL AND id IN "
            f"({placeholders(len(document_ids))})",
            (org_id, *document_ids),
        ).fetchall()
        return {r[0] for r in rows}

    def get_document(self, org_id: str, document_id: str) -> Document | None:
        row = (
            self.db.connection()
            .execute(
                f"SELECT {DOC_COLUMNS} FROM documents WHERE organization_id = ? AND id = ?",
                (org_id, document_id),
            )
            .fetchone()
        )
        return row_to_document(row) if row else None

    def get_documents(self, org_id: str, document_ids: Sequence[str]) -> list[Document]:
        if not document_ids:
            return []
        # `+organization_id`: without table statistics SQLite prefers an (organization_id, ...)
        # index once the IN list has ~10 ids, then walks every document of the tenant (20 ms at
        # 20k documents). The unary + keeps the tenant check but leaves the plan on the primary key.
        rows = (
            self.db.connection()
            .execute(
                f"SELECT {DOC_COLUMNS} FROM documents WHERE +organization_id = ? AND id IN "
                f"({placeholders(len(document_ids))})",
                (org_id, *document_ids),
            )
            .fetchall()
        )
        return [row_to_document(r) for r in rows]

    def find_document_by_hash(self, org_id: str, project_id: str, content_hash: str) -> Document | None:
        row = (
            self.db.connection()
            .execute(
                # `+created_at`: ordering by the bare column makes SQLite (no table statistics) walk
                # the project's documents in documents_recent's order instead of looking the hash
                # up: 1.5 s per save at 200k documents (a million chunks), 0.1 ms through documents_hash
                f"SELECT {DOC_COLUMNS} FROM documents WHERE organization_id = ? AND project_id = ?"
                " AND content_hash = ? AND status != 'failed' ORDER BY +created_at LIMIT 1",
                (org_id, project_id, content_hash),
            )
            .fetchone()
        )
        return row_to_document(row) if row else None

    def set_status(
        self, org_id: str, document_id: str, status: DocumentStatus, reason: str | None = None
    ) -> None:
        with self.db.transaction() as conn:
            conn.execute(
                "UPDATE documents SET status = ?, status_reason = ? WHERE organization_id = ? AND id = ?",
                (status.value, reason, org_id, document_id),
            )

    def delete_document(self, org_id: str, document_id: str) -> bool:
        with self.db.transaction() as conn:
            cur = conn.execute(
                "DELETE FROM documents WHERE organization_id = ? AND id = ?", (org_id, document_id)
            )
            if cur.rowcount == 0:
                return False
            conn.execute("DELETE FROM document_tags WHERE document_id = ?", (document_id,))
            conn.execute("DELETE FROM chunks WHERE document_id = ?", (document_id,))
            conn.execute("DELETE FROM jobs WHERE document_id = ?", (document_id,))
            return True

    def recent_documents(
        self, org_id: str, project_ids: Sequence[str], filters: RecallFilters, now: datetime, limit: int
    ) -> list[Document]:
        sql = [
            f"SELECT {DOC_COLUMNS} FROM documents WHERE organization_id = ? AND status = 'ready'",
            f" AND project_id IN ({placeholders(len(project_ids))})",
            " AND (forget_after IS NULL OR forget_after > ?)",
        ]
        args: list[object] = [org_id, *project_ids, iso(now)]
        if not filters.include_superseded:
            sql.append(" AND superseded_by IS NULL")
        if filters.content_types:
            sql.append(f" AND content_type IN ({placeholders(len(filters.content_types))})")
            args.extend(ct.value for ct in filters.content_types)
        if filters.created_after is not None:
            sql.append(" AND created_at > ?")  # strictly after, as on DynamoDB and OpenSearch
            args.append(iso(filters.created_after))
        labels = filters.labels()
        if labels:
            sql.append(
                " AND id IN (SELECT document_id FROM document_tags WHERE organization_id = ?"
                f" AND tag IN ({placeholders(len(labels))}))"
            )
            args.extend([org_id, *labels])
        sql.append(" ORDER BY created_at DESC, id LIMIT ?")
        args.append(limit)
        rows = self.db.connection().execute("".join(sql), args).fetchall()
        return [row_to_document(r) for r in rows]

    def next_message_index(self, org_id: str, project_id: str, conversation_id: str) -> int:
        row = self.db.connection().execute(
            "SELECT MAX(message_index) FROM documents WHERE organization_id = ? AND project_id = ?"
            " AND conversation_id = ?",
            (org_id, project_id, conversation_id),
        ).fetchone()
        return 0 if row[0] is None else int(row[0]) + 1

    def conversation_documents(
        self, org_id: str, project_id: str, conversation_id: str, now: datetime, *, pending: bool = False
    ) -> list[Document]:
        status = "status != 'failed'" if pending else "status = 'ready'"
        rows = self.db.connection().execute(
            f"SELECT {DOC_COLUMNS} FROM documents WHERE organization_id = ? AND project_id = ?"
            f" AND conversation_id = ? AND {status} AND superseded_by IS NULL"
            " AND (forget_after IS NULL OR forget_after > ?)",
            (org_id, project_id, conversation_id, iso(now)),
        ).fetchall()
        return sorted((row_to_document(r) for r in rows), key=conversation_order)

    def conversation_around(
        self, org_id: str, document_ids: Sequence[str], window: int, now: datetime
    ) -> dict[str, tuple[list[str], list[str]]]:
        """around_in_conversations' answer from keys alone: the documents' places, then each
        conversation's visible messages in order (the `documents_conversation` index), ids only:
        the neighbour stage asks this on every recall, for up to 100 candidates."""
        if not document_ids or window <= 0:
            return {}
        conn = self.db.connection()
        wanted = conn.execute(
            "SELECT id, project_id, conversation_id, COALESCE(message_index, 0) AS position, created_at"
            f" FROM documents WHERE +organization_id = ? AND id IN ({placeholders(len(document_ids))})"
            " AND conversation_id IS NOT NULL",
            (org_id, *dict.fromkeys(document_ids)),
        ).fetchall()
        by_conversation: dict[tuple[str, str], list[sqlite3.Row]] = {}
        for r in wanted:
            by_conversation.setdefault((r["project_id"], r["conversation_id"]), []).append(r)
        stamp = iso(now)
        out: dict[str, tuple[list[str], list[str]]] = {}
        for (project_id, conversation_id), rows in by_conversation.items():
            messages = [
                (m["position"], m["created_at"], m["id"])
                for m in conn.execute(
                    "SELECT id, COALESCE(message_index, 0) AS position, created_at FROM documents"
                    " WHERE organization_id = ? AND project_id = ? AND conversation_id = ? AND status = 'ready'"
                    " AND superseded_by IS NULL AND (forget_after IS NULL OR forget_after > ?)"
                    " ORDER BY position, created_at, id",
                    (org_id, project_id, conversation_id, stamp),
                )
            ]
            for r in rows:
                others = [m for m in messages if m[2] != r["id"]]
                i = bisect.bisect_left(others, (r["position"], r["created_at"], r["id"]))
                out[r["id"]] = ([m[2] for m in others[max(0, i - window):i]][::-1],
                                [m[2] for m in others[i:i + window]])
        return out

    def touch_documents(self, org_id: str, document_ids: Sequence[str], when: datetime) -> None:
        if not document_ids:
            return
        with self.db.transaction() as conn:
            # `+organization_id`: a primary-key lookup per id, as in get_documents
            conn.execute(
                f"UPDATE documents SET last_accessed_at = ? WHERE +organization_id = ? AND id IN "
                f"({placeholders(len(document_ids))})",
                (iso(when), org_id, *document_ids),
            )

    def list_documents(self, org_id: str, project_id: str) -> list[Document]:
        """Every document of a project, whatever its status or version."""
        rows = (
            self.db.connection()
            .execute(
                f"SELECT {DOC_COLUMNS} FROM documents WHERE organization_id = ? AND project_id = ? ORDER BY created_at",
                (org_id, project_id),
            )
            .fetchall()
        )
        return [row_to_document(r) for r in rows]

    def page_documents(
        self, org_id: str, project_id: str, now: datetime, *, limit: int, cursor: str | None = None,
        include_superseded: bool = False,
    ) -> DocumentPage:
        """A project's unexpired documents, newest first, `limit` at a time (keyset paging on
        (created_at, id)). Listings carry no content: `content` is empty."""
        columns = DOC_COLUMNS.replace("content, ", "'' AS content, ", 1)
        sql = [f"SELECT {columns} FROM documents WHERE organization_id = ? AND project_id = ?",
               " AND (forget_after IS NULL OR forget_after > ?)"]
        args: list[object] = [org_id, project_id, iso(now)]
        if not include_superseded:
            sql.append(" AND superseded_by IS NULL")
        if cursor is not None:
            created, doc_id = decode_cursor(cursor)
            sql.append(" AND (created_at < ? OR (created_at = ? AND id < ?))")
            args.extend([created, created, doc_id])
        sql.append(" ORDER BY created_at DESC, id DESC LIMIT ?")
        args.append(limit + 1)
        rows = self.db.connection().execute("".join(sql), args).fetchall()
        docs = [row_to_document(r) for r in rows[:limit]]
        more = len(rows) > limit
        next_cursor = encode_cursor(iso(docs[-1].created_at) or "", docs[-1].id) if more and docs else None
        return DocumentPage(documents=docs, next_cursor=next_cursor)

    def find_latest_by_source_url(self, org_id: str, project_id: str, source_url: str) -> Document | None:
        row = (
            self.db.connection()
            .execute(
                f"SELECT {DOC_COLUMNS} FROM documents WHERE organization_id = ? AND project_id = ? AND source_url = ?"
                " AND superseded_by IS NULL AND status != 'failed' ORDER BY created_at DESC LIMIT 1",
                (org_id, project_id, source_url),
            )
            .fetchone()
        )
        return row_to_document(row) if row else None

    def expired_documents(self, now: datetime, limit: int) -> list[Document]:
        rows = (
            self.db.connection()
            .execute(
                f"SELECT {DOC_COLUMNS} FROM documents WHERE forget_after IS NOT NULL AND forget_after <= ?"
                " ORDER BY forget_after LIMIT ?",
                (iso(now), limit),
            )
            .fetchall()
        )
        return [row_to_document(r) for r in rows]

    def mark_source_changed(self, org_id: str, source_url: str, when: datetime,
                            exclude_project_id: str | None = None) -> int:
        with self.db.transaction() as conn:
            return conn.execute(
                "UPDATE documents SET source_changed_at = ? WHERE organization_id = ? AND source_url = ?"
                " AND project_id IS NOT ?",
                (iso(when), org_id, source_url, exclude_project_id),
            ).rowcount

    def all_document_ids(self, org_id: str | None = None) -> set[str]:
        conn = self.db.connection()
        if org_id is None:
            rows = conn.execute("SELECT id FROM documents").fetchall()
        else:
            rows = conn.execute("SELECT id FROM documents WHERE organization_id = ?", (org_id,)).fetchall()
        return {r["id"] for r in rows}
