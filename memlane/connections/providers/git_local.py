"""A local git clone (`memlane connect git PATH`): the committed files of a branch, read with the
git CLI — no network, no OAuth. The same file rules, metadata and versions (blob SHAs) as a GitHub
repository (memlane.connections.providers.repository); uncommitted changes are not synced."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

from memlane.connections.errors import ProviderItemError, ProviderUnavailable
from memlane.connections.oauth import OAuthSpec
from memlane.connections.providers import repository
from memlane.connections.providers.base import Batch, ProviderDefaults
from memlane.connections.session import ProviderSession
from memlane.domain.connections import Connection, Item, ItemRef, Provider
from memlane.domain.errors import InvalidInputError

GIT_TIMEOUT_S = 120


def run_git(path: str, *args: str, input_bytes: bytes | None = None) -> bytes:
    try:
        done = subprocess.run(["git", "-C", path, "-c", "core.quotepath=off", *args], input=input_bytes,
                              capture_output=True, timeout=GIT_TIMEOUT_S, check=False)
    except FileNotFoundError as exc:
        raise ProviderUnavailable("git is not installed") from exc
    except subprocess.TimeoutExpired as exc:
        raise ProviderUnavailable(f"git {args[0]} timed out in {path}") from exc
    if done.returncode != 0:
        raise ProviderItemError(f"git {args[0]} in {path}: {done.stderr.decode(errors='replace').strip()[:300]}")
    return done.stdout


class LocalGitProvider(ProviderDefaults):
    name: ClassVar[Provider] = Provider.GIT
    oauth: ClassVar[OAuthSpec | None] = None
    api_url: ClassVar[str] = "file:///"
    relists_everything: ClassVar[bool] = False

    def validate_options(self, options: dict[str, Any]) -> dict[str, Any]:
        raw = options.get("path")
        if not isinstance(raw, str) or not raw.strip():
            raise InvalidInputError("options.path", "the path of a local git clone is required")
        path = Path(raw).expanduser().resolve()
        if not path.is_dir():
            raise InvalidInputError("options.path", f"{path} is not a directory")
        try:
            top = run_git(str(path), "rev-parse", "--show-toplevel").decode().strip()
        except ProviderItemError as exc:
            raise InvalidInputError("options.path", f"{path} is not a git repository") from exc
        repo_id = options.get("repo_id") or Path(top).name
        if not isinstance(repo_id, str) or not repo_id.strip():
            raise InvalidInputError("options.repo_id", "must be a non-empty string")
        branch = options.get("branch") or "HEAD"
        if not isinstance(branch, str) or branch.startswith("-"):
            raise InvalidInputError("options.branch", "must be a branch name")
        for key in ("include", "exclude"):
            value = options.get(key, [])
            if not isinstance(value, list) or not all(isinstance(p, str) and p for p in value):
                raise InvalidInputError(f"options.{key}", "must be a list of path prefixes")
        try:
            remote = run_git(top, "config", "--get", "remote.origin.url").decode().strip()
        except ProviderItemError:
            remote = ""
        return {"path": top, "repo_id": repo_id.strip(), "branch": branch, "repo_url": remote or top,
                "include": options.get("include", []), "exclude": options.get("exclude", []),
                "max_files": options.get("max_files", repository.DEFAULT_MAX_FILES)}

    def label(self, options: dict[str, Any], account: str | None) -> str:
        return f"git: {options.get('repo_id')} ({options.get('path')})"

    def scan(self, session: ProviderSession, conn: Connection) -> Iterator[Batch]:
        opts = conn.options
        path, repo_id = opts["path"], opts["repo_id"]
        if not Path(path).is_dir():
            raise ProviderItemError(f"{path} no longer exists")
        head = run_git(path, "rev-parse", "--verify", f"{opts['branch']}^{{commit}}").decode().strip()
        if conn.cursor.get("commit") == head:
            return
        refs: list[ItemRef] = []
        present: set[str] = set()
        for entry in run_git(path, "ls-tree", "-r", "-z", "--long", head).split(b"\x00"):
            if not entry:
                continue
            meta, _, name = entry.partition(b"\t")
            _mode, kind, sha, size = meta.decode().split()
            file_path = name.decode("utf-8", errors="replace")
            if kind != "blob" or len(refs) >= opts.get("max_files", repository.DEFAULT_MAX_FILES):
                continue
            if not repository.wanted(file_path, int(size) if size.isdigit() else None, opts):
                continue
            ext_id = repository.file_id(repo_id, file_path)
            present.add(ext_id)
            refs.append(ItemRef(external_id=ext_id, version=sha, hint={"sha": sha, "path": file_path}))
        yield Batch(upserts=refs, reconcile=(f"{repo_id}:file:", present), cursor={"commit": head})

    def fetch(self, session: ProviderSession, conn: Connection, ref: ItemRef) -> Item | None:
        opts = conn.options
        prefix = repository.file_id(opts["repo_id"], "")
        file_path = ref.hint.get("path") or ref.external_id[len(prefix):]
        sha = ref.hint.get("sha")
        if not sha:
            try:
                sha = run_git(opts["path"], "rev-parse", "--verify", f"{opts['branch']}:{file_path}").decode().strip()
            except ProviderItemError:
                return None  # no longer in the branch
        text = repository.decode_text(run_git(opts["path"], "cat-file", "blob", sha))
        if text is None or not text.strip():
            return None
        return repository.file_item(repo_id=opts["repo_id"], repo_url=opts["repo_url"], path=file_path,
                                    blob_sha=sha, text=text, source_url=f"file://{opts['path']}/{file_path}",
                                    provider_tag="git")
