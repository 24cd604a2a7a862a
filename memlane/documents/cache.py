"""The recall cache's side of a write: one write to a project makes every cached recall over it
unreachable (the Cache port keeps a generation per project: memlane.ports.cache)."""

from __future__ import annotations

from memlane.ports import Cache, project_scope_key


def invalidate_project(cache: Cache | None, org_id: str, project_id: str) -> None:
    """One write makes every cached recall over this project unreachable (no cache: nothing to do)."""
    if cache is not None:
        cache.bump_generation(project_scope_key(org_id, project_id))
