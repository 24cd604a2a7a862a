"""GitHub (REST API v3, https://docs.github.com/rest): a repository's files, README included,
and its issues and pull requests with their comments.

Files: the branch's tree (`GET /repos/{repo}/git/trees/{sha}?recursive=1`, walked one level at a
time when GitHub truncates it) compared with the blob SHAs already synced; changed blobs are read
with `GET /repos/{repo}/git/blobs/{sha}`. A repository whose branch head did not move is not even
listed. Issues and pull requests: `GET /repos/{repo}/issues?state=all&sort=updated&since=…`
(pull requests are issues there), oldest change first, so the cursor advances page by page; their
comments and, for pull requests, review comments. Deleted issues arrive as webhook events; a
daily full listing of issue numbers catches those the webhook missed.

Webhooks (`POST /webhooks/github?connection=<id>`, memlane.connections.webhooks): `push` applies
the commits' added, modified and removed paths at once; `issues`, `issue_comment`,
`pull_request` and `pull_request_review_comment` rewrite the issue they name.

Rate limits: 429, or 403 with `x-ratelimit-remaining: 0` (primary) or a `retry-after` (secondary
limits), become ProviderRateLimited with the time GitHub names.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any, ClassVar

import httpx

from memlane.connections.errors import ProviderItemError, ProviderRateLimited
from memlane.connections.oauth import OAuthSpec, retry_after_seconds
from memlane.connections.providers import repository
from memlane.connections.providers.base import Batch, ProviderDefaults
from memlane.connections.session import ProviderSession
from memlane.domain.connections import Connection, Item, ItemRef, Provider, TokenSet
from memlane.domain.errors import InvalidInputError
from memlane.domain.models import ContentType

API_VERSION = "2022-11-28"
PER_PAGE = 100
MAX_REPOSITORIES = 20
ISSUE_RECONCILE_EVERY = timedelta(hours=24)
MAX_COMMENTS = 500  # per issue: enough to remember a discussion, bounded for a runaway thread
_REPO = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")


def issue_id(repo: str, number: int) -> str:
    return f"{repo}:#{number}"



def _repositories(repos: Any) -> list[str]:
    """owner/name, each once, at most MAX_REPOSITORIES."""
    if not isinstance(repos, list) or not repos:
        raise InvalidInputError("options.repositories", "list the repositories to sync, as owner/name")
    if len(repos) > MAX_REPOSITORIES:
        raise InvalidInputError("options.repositories", f"at most {MAX_REPOSITORIES} per connection")
    for r in repos:
        if not isinstance(r, str) or not _REPO.match(r) or any(p in (".", "..") for p in r.split("/")):
            raise InvalidInputError("options.repositories", f"{r!r} is not owner/name")
    return list(dict.fromkeys(repos))


def _switch(key: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise InvalidInputError(f"options.{key}", "must be true or false")
    return value


def _path_prefixes(key: str, value: Any) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(p, str) and p for p in value):
        raise InvalidInputError(f"options.{key}", "must be a list of path prefixes")
    return value


def _branch(branch: Any) -> str | None:
    if branch is not None and (not isinstance(branch, str) or not branch.strip()):
        raise InvalidInputError("options.branch", "must be a branch name")
    return branch


def _max_files(value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 20_000:
        raise InvalidInputError("options.max_files", "must be an integer from 1 to 20000")
    return value

class GitHubProvider(ProviderDefaults):
    name: ClassVar[Provider] = Provider.GITHUB
    api_url: ClassVar[str] = "https://api.github.com"
    relists_everything: ClassVar[bool] = False
    oauth: ClassVar[OAuthSpec | None] = OAuthSpec(
        authorize_url="https://github.com/login/oauth/authorize",
        token_url="https://github.com/login/oauth/access_token",
        # An OAuth app has no read-only scope for private repositories; a GitHub App (read-only
        # Contents, Issues, Pull requests, Metadata) ignores scopes. See README: Connections.
        scopes=("repo",),
        client_auth="body",
    )

    # ------------------------------------------------------------------ setup

    def validate_options(self, options: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {"repositories": _repositories(options.get("repositories"))}
        for key in ("files", "issues", "pull_requests"):
            out[key] = _switch(key, options.get(key, True))
        for key in ("include", "exclude"):
            out[key] = _path_prefixes(key, options.get(key, []))
        out["branch"] = _branch(options.get("branch"))
        out["max_files"] = _max_files(options.get("max_files", repository.DEFAULT_MAX_FILES))
        unknown = set(options) - set(out)
        if unknown:
            raise InvalidInputError(f"options.{sorted(unknown)[0]}", "is not an option of github connections")
        return out

    def label(self, options: dict[str, Any], account: str | None) -> str:
        repos = options.get("repositories") or []
        shown = ", ".join(repos[:3]) + (f" and {len(repos) - 3} more" if len(repos) > 3 else "")
        return f"GitHub: {shown}"

    def session_headers(self) -> dict[str, str]:
        return {"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": API_VERSION}

    def classify(self, response: httpx.Response, now: datetime) -> Exception | None:
        if response.status_code == 403 and (response.headers.get("x-ratelimit-remaining") == "0"
                                            or response.headers.get("retry-after")):
            return ProviderRateLimited("github: rate limit exceeded", retry_after_seconds(response, now))
        return None

    def identify(self, session: ProviderSession, tokens: TokenSet) -> str | None:
        user = session.get_json("/user")
        return user.get("login") if isinstance(user, dict) else None

    # ------------------------------------------------------------------ listing

    def scan(self, session: ProviderSession, conn: Connection) -> Iterator[Batch]:
        for repo in conn.options["repositories"]:
            try:
                info = session.get_json(f"/repos/{repo}")
            except ProviderItemError as exc:
                # An inaccessible repository is reported, never taken as "everything was deleted".
                yield Batch(errors=[f"{repo}: {exc.message}"])
                continue
            state = dict(conn.cursor.get(repo) or {})
            if conn.options.get("files", True):
                yield from self._scan_files(session, conn, repo, info, state)
            if conn.options.get("issues", True) or conn.options.get("pull_requests", True):
                yield from self._scan_issues(session, conn, repo, state)

    def _scan_files(self, session: ProviderSession, conn: Connection, repo: str, info: dict[str, Any],
                    state: dict[str, Any]) -> Iterator[Batch]:
        branch = conn.options.get("branch") or info.get("default_branch") or "main"
        head = session.get_json(f"/repos/{repo}/branches/{branch}")
        commit = head["commit"]["sha"]
        tree_sha = head["commit"]["commit"]["tree"]["sha"]
        if state.get("commit") == commit and state.get("branch") == branch:
            return  # nothing pushed since the last sync
        html_url = info.get("html_url") or f"https://github.com/{repo}"
        refs: list[ItemRef] = []
        present: set[str] = set()
        for path, sha, size in self._tree(session, repo, tree_sha):
            if len(refs) >= conn.options.get("max_files", repository.DEFAULT_MAX_FILES):
                break
            if not repository.wanted(path, size, conn.options):
                continue
            ext_id = repository.file_id(repo, path)
            present.add(ext_id)
            refs.append(ItemRef(external_id=ext_id, version=sha,
                                hint={"repo": repo, "path": path, "sha": sha, "branch": branch,
                                      "html_url": html_url}))
        yield Batch(upserts=refs, reconcile=(f"{repo}:file:", present),
                    cursor={repo: {**state, "commit": commit, "branch": branch}})
        state.update(commit=commit, branch=branch)

    def _tree(self, session: ProviderSession, repo: str, tree_sha: str) -> Iterator[tuple[str, str, int | None]]:
        tree = session.get_json(f"/repos/{repo}/git/trees/{tree_sha}", params={"recursive": "1"})
        if not tree.get("truncated"):
            for entry in tree.get("tree", []):
                if entry.get("type") == "blob":
                    yield entry["path"], entry["sha"], entry.get("size")
            return
        # Too big for one answer: one level at a time (GitHub's documented fallback).
        stack = [("", tree_sha)]
        while stack:
            prefix, sha = stack.pop()
            level = session.get_json(f"/repos/{repo}/git/trees/{sha}")
            for entry in level.get("tree", []):
                path = f"{prefix}{entry['path']}"
                if entry.get("type") == "tree":
                    if entry["path"] not in repository.SKIPPED_DIRS:
                        stack.append((f"{path}/", entry["sha"]))
                elif entry.get("type") == "blob":
                    yield path, entry["sha"], entry.get("size")

    def _scan_issues(self, session: ProviderSession, conn: Connection, repo: str,
                     state: dict[str, Any]) -> Iterator[Batch]:
        params: dict[str, Any] = {"state": "all", "sort": "updated", "direction": "asc", "per_page": PER_PAGE}
        if state.get("issues_since"):
            params["since"] = state["issues_since"]
        url: str | None = f"/repos/{repo}/issues"
        while url:
            response = session.request("GET", url, params=params)
            page = response.json()
            refs = [ItemRef(external_id=issue_id(repo, i["number"]), version=i.get("updated_at"),
                            hint={"repo": repo, "number": i["number"], "pull": "pull_request" in i})
                    for i in page if self._included(conn, i)]
            latest = max((i.get("updated_at") or "" for i in page), default="")
            if latest:
                state["issues_since"] = max(latest, state.get("issues_since") or "")
            yield Batch(upserts=refs, cursor={repo: dict(state)})
            url, params = response.links.get("next", {}).get("url"), {}
        now = session.clock.now()
        reconciled = state.get("issues_reconciled_at")
        if reconciled is None or datetime.fromisoformat(reconciled) + ISSUE_RECONCILE_EVERY <= now:
            present = set(self._all_issue_ids(session, conn, repo))
            state["issues_reconciled_at"] = now.isoformat()
            yield Batch(reconcile=(f"{repo}:#", present), cursor={repo: dict(state)})

    def _all_issue_ids(self, session: ProviderSession, conn: Connection, repo: str) -> Iterator[str]:
        url: str | None = f"/repos/{repo}/issues"
        params: dict[str, Any] = {"state": "all", "per_page": PER_PAGE}
        while url:
            response = session.request("GET", url, params=params)
            for i in response.json():
                if self._included(conn, i):
                    yield issue_id(repo, i["number"])
            url, params = response.links.get("next", {}).get("url"), {}

    @staticmethod
    def _included(conn: Connection, issue: dict[str, Any]) -> bool:
        key = "pull_requests" if "pull_request" in issue else "issues"
        return bool(conn.options.get(key, True))

    # ------------------------------------------------------------------ reading one item

    def fetch(self, session: ProviderSession, conn: Connection, ref: ItemRef) -> Item | None:
        repo, _, rest = ref.external_id.partition(":")
        if rest.startswith("file:"):
            return self._fetch_file(session, conn, repo, rest[len("file:"):], ref)
        if rest.startswith("#"):
            return self._fetch_issue(session, repo, int(rest[1:]))
        raise ProviderItemError(f"github: unknown item {ref.external_id}")

    def _fetch_file(self, session: ProviderSession, conn: Connection, repo: str, path: str,
                    ref: ItemRef) -> Item | None:
        hint = ref.hint
        if repo not in conn.options["repositories"]:
            return None  # the repository left the connection's options
        if hint.get("sha"):
            blob = session.get_json(f"/repos/{repo}/git/blobs/{hint['sha']}")
            sha = hint["sha"]
            branch, html_url = hint["branch"], hint["html_url"]
        else:
            # A retry or a webhook: the file as of the pushed commit (or the branch now).
            info = session.get_json(f"/repos/{repo}")
            branch = conn.options.get("branch") or info.get("default_branch") or "main"
            html_url = info.get("html_url") or f"https://github.com/{repo}"
            try:
                blob = session.get_json(f"/repos/{repo}/contents/{path}", params={"ref": hint.get("commit") or branch})
            except ProviderItemError as exc:
                if exc.gone:
                    return None
                raise
            if not isinstance(blob, dict) or blob.get("type") != "file":
                return None
            sha = blob["sha"]
            if not repository.wanted(path, blob.get("size"), conn.options):
                return None
        if blob.get("encoding") != "base64":
            raise ProviderItemError(f"github: {path} came without base64 content")
        text = repository.decode_text(base64.b64decode(blob.get("content") or ""))
        if text is None or not text.strip():
            return None  # binary or empty: nothing to remember
        return repository.file_item(repo_id=repo, repo_url=html_url, path=path, blob_sha=sha, text=text,
                                    source_url=f"{html_url}/blob/{branch}/{path}", provider_tag="github")

    def _fetch_issue(self, session: ProviderSession, repo: str, number: int) -> Item | None:
        try:
            issue = session.get_json(f"/repos/{repo}/issues/{number}")
        except ProviderItemError as exc:
            if exc.gone:  # deleted (410) or transferred away (404)
                return None
            raise
        pull = "pull_request" in issue
        comments = list(self._paged(session, f"/repos/{repo}/issues/{number}/comments"))
        if pull:
            comments += [{**c, "review": True} for c in self._paged(session, f"/repos/{repo}/pulls/{number}/comments")]
            comments.sort(key=lambda c: c.get("created_at") or "")
        kind = "Pull request" if pull else "Issue"
        labels = [str(lb["name"]) for lb in issue.get("labels") or [] if isinstance(lb, dict) and lb.get("name")]
        lines = [f"# {issue.get('title') or ''}".rstrip(), "",
                 f"{kind} #{number} in {repo} · {issue.get('state')} · opened by "
                 f"@{(issue.get('user') or {}).get('login', 'unknown')} on {issue.get('created_at')}"
                 + (f" · labels: {', '.join(labels)}" if labels else ""), ""]
        if issue.get("body"):
            lines += [issue["body"].strip(), ""]
        if comments:
            lines += ["## Comments", ""]
            for c in comments[:MAX_COMMENTS]:
                where = f" on {c['path']}" if c.get("review") and c.get("path") else ""
                lines += [f"### @{(c.get('user') or {}).get('login', 'unknown')}{where} · {c.get('created_at')}", "",
                          (c.get("body") or "").strip(), ""]
        return Item(
            external_id=issue_id(repo, number),
            version=issue.get("updated_at"),
            title=f"{repo}#{number}: {issue.get('title') or ''}"[:500],
            content="\n".join(lines).strip() + "\n",
            content_type=ContentType.MARKDOWN,
            source_url=issue.get("html_url"),
            metadata={"repoId": repo, "number": number, "kind": "pull_request" if pull else "issue",
                      "state": issue.get("state"), "labels": labels},
            tags=["github", f"repo:{repo.lower()}", "pull-request" if pull else "issue"],
        )

    def _paged(self, session: ProviderSession, path: str) -> Iterator[dict[str, Any]]:
        url: str | None = path
        params: dict[str, Any] = {"per_page": PER_PAGE}
        fetched = 0
        while url and fetched < MAX_COMMENTS:
            response = session.request("GET", url, params=params)
            page = response.json()
            fetched += len(page)
            yield from page
            url, params = response.links.get("next", {}).get("url"), {}
