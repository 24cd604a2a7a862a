"""Projects on SQLite (memlane.ports.ProjectStore)."""

from __future__ import annotations

import sqlite3

from memlane.adapters.local.metadata.base import SqliteTables
from memlane.adapters.local.sqlite_db import iso, parse_iso_required
from memlane.domain.errors import ConflictError
from memlane.domain.models import Project


def row_to_project(row: sqlite3.Row) -> Project:
    return Project(
        id=row["id"],
        organization_id=row["organization_id"],
        name=row["name"],
        slug=row["slug"],
        description=row["description"],
        is_default=bool(row["is_default"]),
        created_at=parse_iso_required(row["created_at"]),
        updated_at=parse_iso_required(row["updated_at"]),
    )


class SqliteProjectStore(SqliteTables):
    """ProjectStore on SQLite."""

    def create_project(self, project: Project) -> Project:
        try:
            with self.db.transaction() as conn:
                conn.execute(
                    "INSERT INTO projects (id, organization_id, name, slug, description, is_default, created_at,"
                    " updated_at) VALUES (?,?,?,?,?,?,?,?)",
                    (
                        project.id,
                        project.organization_id,
                        project.name,
                        project.slug,
                        project.description,
                        int(project.is_default),
                        iso(project.created_at),
                        iso(project.updated_at),
                    ),
                )
        except sqlite3.IntegrityError as exc:
            raise ConflictError(f"a project with slug {project.slug!r} already exists") from exc
        return project

    def get_project(self, org_id: str, project_id: str) -> Project | None:
        row = (
            self.db.connection()
            .execute("SELECT * FROM projects WHERE organization_id = ? AND id = ?", (org_id, project_id))
            .fetchone()
        )
        return row_to_project(row) if row else None

    def find_project_by_slug(self, org_id: str, slug: str) -> Project | None:
        row = (
            self.db.connection()
            .execute("SELECT * FROM projects WHERE organization_id = ? AND slug = ?", (org_id, slug))
            .fetchone()
        )
        return row_to_project(row) if row else None

    def list_projects(self, org_id: str) -> list[Project]:
        rows = (
            self.db.connection()
            .execute(
                "SELECT * FROM projects WHERE organization_id = ? ORDER BY is_default DESC, created_at",
                (org_id,),
            )
            .fetchall()
        )
        return [row_to_project(r) for r in rows]

    def count_documents(self, org_id: str, *, current_only: bool = False) -> dict[str, int]:
        current = " AND superseded_by IS NULL" if current_only else ""
        rows = (
            self.db.connection()
            .execute(
                f"SELECT project_id, COUNT(*) AS n FROM documents WHERE organization_id = ?{current} GROUP BY project_id",
                (org_id,),
            )
            .fetchall()
        )
        return {r["project_id"]: r["n"] for r in rows}

    def update_project(self, project: Project) -> None:
        """Name, slug, description and updated_at of an existing project."""
        try:
            with self.db.transaction() as conn:
                conn.execute(
                    "UPDATE projects SET name = ?, slug = ?, description = ?, updated_at = ?"
                    " WHERE organization_id = ? AND id = ?",
                    (project.name, project.slug, project.description, iso(project.updated_at),
                     project.organization_id, project.id),
                )
        except sqlite3.IntegrityError as exc:
            raise ConflictError(f"a project with slug {project.slug!r} already exists") from exc

    def delete_project(self, org_id: str, project_id: str) -> bool:
        """The project record only: its documents are removed first, one by one, by the caller."""
        with self.db.transaction() as conn:
            cur = conn.execute("DELETE FROM projects WHERE organization_id = ? AND id = ?", (org_id, project_id))
            return cur.rowcount > 0
