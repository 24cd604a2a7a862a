"""DocsetStore on SQLite: docsets, the crawl state of every page, and client sessions.

The crawl state is the crawl's memory: pages are claimed from here (one transaction marks a batch
`processing`), so a crawl killed mid-way resumes where it stopped, and a page is never handed to
two workers at once. The tables live in the same database file as the documents they point to.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence

from memlane.adapters.local.sqlite_db import SqliteDatabase
from memlane.domain.docsets import ClientSession, Docset, DocsetPage, PageCounts, PageStatus, new_page

_PAGE_COLUMNS = (
    "id, docset_id, organization_id, url, path, title, status, etag, last_modified, content_hash, "
    "document_id, chunk_count, attempts, error, retry_at, claimed_at, fetched_at, indexed_at, "
    "created_at, updated_at, sketch"
)
_PAGE_FIELDS = [c.strip() for c in _PAGE_COLUMNS.split(",")]
_DOCSET_FIELDS = ["id", "organization_id", "project_id", "name", "base_url", "seed_url", "seed_slug",
                  "allowed_paths", "max_pages", "created_at", "updated_at", "last_refreshed_at"]


def _page(row: sqlite3.Row) -> DocsetPage:
    data = {k: row[k] for k in _PAGE_FIELDS}
    data["sketch"] = json.loads(data["sketch"]) if data["sketch"] else None
    return DocsetPage(**data)


def _page_values(page: DocsetPage) -> tuple:
    data = page.model_dump()
    data["status"] = page.status.value
    data["sketch"] = json.dumps(page.sketch, separators=(",", ":")) if page.sketch is not None else None
    return tuple(data[k] for k in _PAGE_FIELDS)


def _docset(row: sqlite3.Row) -> Docset:
    data = {k: row[k] for k in _DOCSET_FIELDS}
    data["allowed_paths"] = json.loads(data["allowed_paths"])
    return Docset(**data)


def _placeholders(n: int) -> str:
    return ",".join("?" * n)


class SqliteDocsetStore:
    def __init__(self, db: SqliteDatabase) -> None:
        self.db = db

    # ------------------------------------------------------------------ docsets

    def create_docset(self, docset: Docset) -> Docset:
        data = docset.model_dump()
        data["allowed_paths"] = json.dumps(docset.allowed_paths)
        with self.db.transaction() as conn:
            conn.execute(f"INSERT INTO docsets ({', '.join(_DOCSET_FIELDS)}) VALUES "
                         f"({_placeholders(len(_DOCSET_FIELDS))})", tuple(data[k] for k in _DOCSET_FIELDS))
        return docset

    def update_docset(self, docset: Docset) -> None:
        with self.db.transaction() as conn:
            conn.execute("UPDATE docsets SET name = ?, updated_at = ?, last_refreshed_at = ? WHERE id = ?",
                         (docset.name, docset.updated_at, docset.last_refreshed_at, docset.id))

    def get_docset(self, org_id: str, docset_id: str) -> Docset | None:
        row = self.db.connection().execute(
            "SELECT * FROM docsets WHERE organization_id = ? AND id = ?", (org_id, docset_id)).fetchone()
        return _docset(row) if row else None

    def list_docsets(self, org_id: str | None = None) -> list[Docset]:
        conn = self.db.connection()
        if org_id is None:
            rows = conn.execute("SELECT * FROM docsets ORDER BY created_at, id").fetchall()
        else:
            rows = conn.execute("SELECT * FROM docsets WHERE organization_id = ? ORDER BY created_at, id",
                                (org_id,)).fetchall()
        return [_docset(r) for r in rows]

    def delete_docset(self, org_id: str, docset_id: str) -> bool:
        """Removes the docset, its page records and the project created for it. The documents in that
        project are removed by the caller first, through memlane's one delete path."""
        with self.db.transaction() as conn:
            row = conn.execute("SELECT project_id FROM docsets WHERE organization_id = ? AND id = ?",
                               (org_id, docset_id)).fetchone()
            if row is None:
                return False
            conn.execute("DELETE FROM docset_pages WHERE docset_id = ?", (docset_id,))
            conn.execute("DELETE FROM docsets WHERE id = ?", (docset_id,))
            conn.execute("DELETE FROM projects WHERE organization_id = ? AND id = ?",
                         (org_id, row["project_id"]))
            return True

    # ------------------------------------------------------------------ pages

    def add_pages(self, docset: Docset, urls: Sequence[str], now: int) -> list[str]:
        """Queue URLs not yet known to the docset, up to its page cap. Returns the URLs queued (a
        page queue on AWS sends one message for each)."""
        if not urls:
            return []
        with self.db.transaction() as conn:
            count = conn.execute("SELECT COUNT(*) AS n FROM docset_pages WHERE docset_id = ?",
                                 (docset.id,)).fetchone()["n"]
            room = docset.max_pages - count
            added: list[str] = []
            for url in dict.fromkeys(urls):
                if len(added) >= room:
                    break
                page = new_page(docset, url, now)
                cur = conn.execute(f"INSERT OR IGNORE INTO docset_pages ({_PAGE_COLUMNS}) VALUES "
                                   f"({_placeholders(len(_PAGE_FIELDS))})", _page_values(page))
                if cur.rowcount:
                    added.append(url)
            return added

    def insert_page(self, page: DocsetPage) -> bool:
        """Insert `page` as given unless the docset already has its URL. True when inserted."""
        with self.db.transaction() as conn:
            cur = conn.execute(f"INSERT OR IGNORE INTO docset_pages ({_PAGE_COLUMNS}) VALUES "
                               f"({_placeholders(len(_PAGE_FIELDS))})", _page_values(page))
            return cur.rowcount > 0

    def save_page(self, page: DocsetPage) -> None:
        sets = ", ".join(f"{k} = ?" for k in _PAGE_FIELDS[1:])
        values = _page_values(page)
        with self.db.transaction() as conn:
            conn.execute(f"UPDATE docset_pages SET {sets} WHERE id = ?", (*values[1:], page.id))

    def get_page(self, docset_id: str, page_id: str) -> DocsetPage | None:
        row = self.db.connection().execute(
            f"SELECT {_PAGE_COLUMNS} FROM docset_pages WHERE docset_id = ? AND id = ?",
            (docset_id, page_id)).fetchone()
        return _page(row) if row else None

    def delete_page(self, docset_id: str, page_id: str) -> None:
        with self.db.transaction() as conn:
            conn.execute("DELETE FROM docset_pages WHERE docset_id = ? AND id = ?", (docset_id, page_id))

    def claim_pages(self, now: int, limit: int, exclude_docsets: Sequence[str] = ()) -> list[DocsetPage]:
        """Mark up to `limit` due pages `processing` and return them (oldest first)."""
        sql = (f"SELECT {_PAGE_COLUMNS} FROM docset_pages WHERE retry_at IS NOT NULL AND retry_at <= ?"
               " AND status IN ('pending', 'error')")
        args: list[object] = [now]
        if exclude_docsets:
            sql += f" AND docset_id NOT IN ({_placeholders(len(exclude_docsets))})"
            args.extend(exclude_docsets)
        sql += " ORDER BY retry_at, created_at LIMIT ?"
        args.append(limit)
        with self.db.transaction() as conn:
            rows = conn.execute(sql, args).fetchall()
            pages = [_page(r) for r in rows]
            claimed = []
            for p in pages:
                conn.execute("UPDATE docset_pages SET status = 'processing', claimed_at = ?, retry_at = NULL,"
                             " attempts = attempts + 1, updated_at = ? WHERE id = ?", (now, now, p.id))
                claimed.append(p.model_copy(update={"status": PageStatus.PROCESSING, "claimed_at": now,
                                                    "retry_at": None, "attempts": p.attempts + 1,
                                                    "updated_at": now}))
            return claimed

    def claim_page(self, docset_id: str, page_id: str, now: int,
                   stuck_before: int | None = None) -> DocsetPage | None:
        """Claim one page when it is due (waitForSeed, a page worker's message). With
        `stuck_before`, a page claimed before then and never finished is claimed again too (the
        page queue's redelivery after a worker died)."""
        stuck = " OR (status = 'processing' AND claimed_at < ?)" if stuck_before is not None else ""
        with self.db.transaction() as conn:
            cur = conn.execute(
                "UPDATE docset_pages SET status = 'processing', claimed_at = ?, retry_at = NULL,"
                " attempts = attempts + 1, updated_at = ? WHERE docset_id = ? AND id = ?"
                f" AND ((retry_at IS NOT NULL AND status IN ('pending', 'error')){stuck})",
                (now, now, docset_id, page_id, *(() if stuck_before is None else (stuck_before,))))
            if cur.rowcount == 0:
                return None
        return self.get_page(docset_id, page_id)

    def next_due(self) -> int | None:
        row = self.db.connection().execute(
            "SELECT MIN(retry_at) AS t FROM docset_pages WHERE retry_at IS NOT NULL"
            " AND status IN ('pending', 'error')").fetchone()
        return row["t"] if row and row["t"] is not None else None

    def list_pages(self, docset_id: str, status: PageStatus | None = None, limit: int = 100,
                   offset: int = 0) -> tuple[list[DocsetPage], int]:
        conn = self.db.connection()
        where, args = "docset_id = ?", [docset_id]
        if status is not None:
            where += " AND status = ?"
            args.append(status.value)
        total = conn.execute(f"SELECT COUNT(*) AS n FROM docset_pages WHERE {where}", args).fetchone()["n"]
        rows = conn.execute(f"SELECT {_PAGE_COLUMNS} FROM docset_pages WHERE {where}"
                            " ORDER BY created_at, url LIMIT ? OFFSET ?", (*args, limit, offset)).fetchall()
        return [_page(r) for r in rows], total

    def page_counts(self, docset_id: str, stuck_before: int) -> PageCounts:
        row = self.db.connection().execute(
            "SELECT COUNT(*) AS total,"
            " SUM(status = 'indexed') AS indexed,"
            " SUM(status IN ('pending', 'processing')) AS pending,"
            " SUM(status = 'error') AS error,"
            " SUM(status = 'skipped') AS skipped,"
            " SUM(CASE WHEN status = 'indexed' THEN chunk_count ELSE 0 END) AS chunks,"
            " SUM(status = 'processing' AND claimed_at < ?) AS stuck,"
            " SUM(attempts > 1) AS retried,"
            " SUM(status = 'error' AND retry_at IS NOT NULL) AS retrying,"
            " MAX(updated_at) AS last_update"
            " FROM docset_pages WHERE docset_id = ?", (stuck_before, docset_id)).fetchone()
        data = dict(row)
        return PageCounts(**{k: v if k == "last_update" else (v or 0) for k, v in data.items()})

    def stuck_pages(self, docset_id: str, stuck_before: int, limit: int = 100) -> list[DocsetPage]:
        rows = self.db.connection().execute(
            f"SELECT {_PAGE_COLUMNS} FROM docset_pages WHERE docset_id = ? AND status = 'processing'"
            " AND claimed_at < ? ORDER BY claimed_at LIMIT ?", (docset_id, stuck_before, limit)).fetchall()
        return [_page(r) for r in rows]

    def release_stuck(self, stuck_before: int, now: int) -> int:
        """Pages claimed before `stuck_before` and never finished go back to the queue (a worker
        died, or the server was killed). Pass `now` as `stuck_before` at start-up: nothing is in
        flight then."""
        with self.db.transaction() as conn:
            return conn.execute(
                "UPDATE docset_pages SET status = 'pending', retry_at = ?, updated_at = ?,"
                " error = COALESCE(error, 'retried after being stuck in processing')"
                " WHERE status = 'processing' AND claimed_at < ?", (now, now, stuck_before)).rowcount

    def requeue_docset(self, docset_id: str, now: int, clear_hashes: bool) -> tuple[int, int, int]:
        """Queue every page of the docset again (a refresh). Pages keep their ETag, Last-Modified
        and content hash, so unchanged pages are not re-embedded - unless `clear_hashes` (a full
        reindex), or the page never got indexed (errors, skips), whose validators are cleared.
        Returns (pages queued, hashes preserved, hashes cleared)."""
        with self.db.transaction() as conn:
            rows = conn.execute("SELECT id, status, content_hash FROM docset_pages WHERE docset_id = ?"
                                " AND status != 'processing'", (docset_id,)).fetchall()
            keep = [r["id"] for r in rows
                    if not clear_hashes and r["status"] == "indexed" and r["content_hash"]]
            kept = set(keep)
            clear = [r["id"] for r in rows if r["id"] not in kept]
            for ids, reset in ((keep, False), (clear, True)):
                for start in range(0, len(ids), 500):
                    part = ids[start:start + 500]
                    extra = ", etag = NULL, last_modified = NULL, content_hash = NULL" if reset else ""
                    conn.execute("UPDATE docset_pages SET status = 'pending', retry_at = ?, attempts = 0,"
                                 f" error = NULL, updated_at = ?{extra}"
                                 f" WHERE id IN ({_placeholders(len(part))})", (now, now, *part))
            return len(rows), len(keep), len(clear)

    def page_ids(self, docset_id: str) -> list[tuple[str, str | None]]:
        rows = self.db.connection().execute(
            "SELECT id, document_id FROM docset_pages WHERE docset_id = ?", (docset_id,)).fetchall()
        return [(r["id"], r["document_id"]) for r in rows]

    def text_version(self, docset_id: str) -> int:
        row = self.db.connection().execute("SELECT text_version FROM docsets WHERE id = ?", (docset_id,)).fetchone()
        return int(row["text_version"]) if row else 0

    def register_text(self, docset_id: str, page_id: str, sketch: list[int], expected_version: int) -> bool:
        """The version's compare-and-set and the page's sketch in one write transaction."""
        with self.db.transaction() as conn:
            bumped = conn.execute("UPDATE docsets SET text_version = text_version + 1"
                                  " WHERE id = ? AND text_version = ?", (docset_id, expected_version)).rowcount
            if not bumped:
                return False
            conn.execute("UPDATE docset_pages SET sketch = ? WHERE docset_id = ? AND id = ?",
                         (json.dumps(sketch, separators=(",", ":")), docset_id, page_id))
            return True

    # ------------------------------------------------------------------ sessions

    def put_session(self, session: ClientSession) -> None:
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT INTO docset_sessions (organization_id, id, client_type, connected_at, last_heartbeat)"
                " VALUES (?,?,?,?,?) ON CONFLICT (organization_id, id) DO UPDATE SET"
                " client_type = excluded.client_type, last_heartbeat = excluded.last_heartbeat",
                (session.organization_id, session.id, session.client_type, session.connected_at,
                 session.last_heartbeat))

    def get_session(self, org_id: str, session_id: str) -> ClientSession | None:
        row = self.db.connection().execute(
            "SELECT * FROM docset_sessions WHERE organization_id = ? AND id = ?",
            (org_id, session_id)).fetchone()
        return ClientSession(**dict(row)) if row else None

    def delete_session(self, org_id: str, session_id: str) -> bool:
        with self.db.transaction() as conn:
            return conn.execute("DELETE FROM docset_sessions WHERE organization_id = ? AND id = ?",
                                (org_id, session_id)).rowcount > 0

    def list_sessions(self, org_id: str) -> list[ClientSession]:
        rows = self.db.connection().execute(
            "SELECT * FROM docset_sessions WHERE organization_id = ? ORDER BY connected_at, id",
            (org_id,)).fetchall()
        return [ClientSession(**dict(r)) for r in rows]
