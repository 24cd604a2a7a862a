"""GitHub's REST API on loopback, from https://docs.github.com/rest: repositories, branches, git
trees (recursive, or `truncated` to force the one-level walk) and blobs with real git blob SHAs,
contents, issues and pull requests (`since`, `sort=updated`, Link-header pagination), comments and
review comments, `/user`; GitHub's OAuth web flow with PKCE (client credentials in the body)."""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlencode

from fake_provider import FakeProvider, Reply, Request, json_reply


def blob_sha(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\x00" % len(data) + data).hexdigest()  # noqa: S324 - git's object id


@dataclass
class Issue:
    number: int
    title: str
    body: str
    updated_at: str
    created_at: str
    pull: bool = False
    state: str = "open"
    comments: list[dict[str, Any]] = field(default_factory=list)
    review_comments: list[dict[str, Any]] = field(default_factory=list)
    deleted: bool = False


@dataclass
class Repo:
    full_name: str
    files: dict[str, bytes] = field(default_factory=dict)
    issues: dict[int, Issue] = field(default_factory=dict)
    default_branch: str = "main"


class FakeGitHub(FakeProvider):
    token_ttl_s = 8 * 3600  # GitHub App user tokens: 8 hours, with a refresh token
    client_auth = "body"
    per_page_cap = 2  # small pages, so pagination is exercised with a handful of issues

    def __init__(self) -> None:
        self.repos: dict[str, Repo] = {}
        self.truncate_trees = False
        self._tick = datetime(2025, 1, 1, tzinfo=UTC)
        super().__init__()

    def reset_data(self) -> None:
        self.repos.clear()
        self.truncate_trees = False
        self.reset()

    def now(self) -> str:
        self._tick += timedelta(minutes=1)
        return self._tick.strftime("%Y-%m-%dT%H:%M:%SZ")

    # ------------------------------------------------------------------ test-side changes

    def repo(self, name: str) -> Repo:
        return self.repos.setdefault(name, Repo(name))

    def add_issue(self, repo: str, number: int, title: str, body: str, pull: bool = False) -> Issue:
        stamp = self.now()
        issue = Issue(number, title, body, stamp, stamp, pull)
        self.repo(repo).issues[number] = issue
        return issue

    def comment(self, repo: str, number: int, login: str, body: str, review_path: str | None = None) -> None:
        issue = self.repo(repo).issues[number]
        entry = {"user": {"login": login}, "body": body, "created_at": self.now()}
        if review_path:
            issue.review_comments.append({**entry, "path": review_path})
        else:
            issue.comments.append(entry)
        issue.updated_at = self.now()

    # ------------------------------------------------------------------ derived git objects

    def _trees(self, repo: Repo) -> tuple[str, dict[str, list[dict[str, Any]]]]:
        """(root tree sha, tree sha → entries), content-addressed like git's."""
        dirs: dict[str, list[dict[str, Any]]] = {"": []}
        for path in sorted(repo.files):
            parts = path.split("/")
            for i in range(1, len(parts)):
                dirs.setdefault("/".join(parts[:i]), [])
        trees: dict[str, list[dict[str, Any]]] = {}
        shas: dict[str, str] = {}
        for d in sorted(dirs, key=lambda p: -p.count("/") if p else 1):
            entries = []
            for path, data in sorted(repo.files.items()):
                parent, _, name = path.rpartition("/")
                if parent == d:
                    entries.append({"path": name, "mode": "100644", "type": "blob", "sha": blob_sha(data),
                                    "size": len(data)})
            for sub in dirs:
                if sub and sub.rpartition("/")[0] == d and sub in shas:
                    entries.append({"path": sub.rpartition("/")[2], "mode": "040000", "type": "tree", "sha": shas[sub]})
            sha = hashlib.sha1(repr(sorted((e["path"], e["sha"]) for e in entries)).encode()).hexdigest()  # noqa: S324
            shas[d] = sha
            trees[sha] = entries
        return shas[""], trees

    def head(self, repo: Repo) -> tuple[str, str]:
        root, _ = self._trees(repo)
        return hashlib.sha1(("commit" + root).encode()).hexdigest(), root  # noqa: S324

    # ------------------------------------------------------------------ API

    def setup_routes(self) -> None:
        repo = r"/repos/(?P<owner>[^/]+)/(?P<name>[^/]+)"
        self.route("GET", r"/user", lambda r: json_reply({"login": "octocat", "id": 1}))
        self.route("GET", repo, self.get_repo)
        self.route("GET", repo + r"/branches/(?P<branch>[^/]+)", self.get_branch)
        self.route("GET", repo + r"/git/trees/(?P<sha>[0-9a-f]+)", self.get_tree)
        self.route("GET", repo + r"/git/blobs/(?P<sha>[0-9a-f]+)", self.get_blob)
        self.route("GET", repo + r"/contents/(?P<path>.+)", self.get_contents)
        self.route("GET", repo + r"/issues", self.list_issues)
        self.route("GET", repo + r"/issues/(?P<number>\d+)", self.get_issue)
        self.route("GET", repo + r"/issues/(?P<number>\d+)/comments", self.issue_comments)
        self.route("GET", repo + r"/pulls/(?P<number>\d+)/comments", self.review_comments)

    def _repo(self, request: Request) -> Repo | None:
        return self.repos.get(f"{request.match['owner']}/{request.match['name']}")

    def get_repo(self, request: Request) -> Reply:
        repo = self._repo(request)
        if repo is None:
            return json_reply({"message": "Not Found"}, 404)
        return json_reply({"full_name": repo.full_name, "default_branch": repo.default_branch, "private": True,
                           "html_url": f"https://github.com/{repo.full_name}"})

    def get_branch(self, request: Request) -> Reply:
        repo = self._repo(request)
        if repo is None or request.match["branch"] != repo.default_branch:
            return json_reply({"message": "Branch not found"}, 404)
        commit, tree = self.head(repo)
        return json_reply({"name": repo.default_branch, "commit": {"sha": commit, "commit": {"tree": {"sha": tree}}}})

    def get_tree(self, request: Request) -> Reply:
        repo = self._repo(request)
        _, trees = self._trees(repo)
        sha = request.match["sha"]
        if sha not in trees:
            return json_reply({"message": "Not Found"}, 404)
        if request.arg("recursive") and self.truncate_trees:
            return json_reply({"sha": sha, "tree": trees[sha][:1], "truncated": True})
        if not request.arg("recursive"):
            return json_reply({"sha": sha, "tree": trees[sha], "truncated": False})
        flat = [{"path": p, "mode": "100644", "type": "blob", "sha": blob_sha(d), "size": len(d)}
                for p, d in sorted(repo.files.items())]
        return json_reply({"sha": sha, "tree": flat, "truncated": False})

    def get_blob(self, request: Request) -> Reply:
        repo = self._repo(request)
        for data in repo.files.values():
            if blob_sha(data) == request.match["sha"]:
                return json_reply({"sha": request.match["sha"], "size": len(data), "encoding": "base64",
                                   "content": base64.encodebytes(data).decode()})
        return json_reply({"message": "Not Found"}, 404)

    def get_contents(self, request: Request) -> Reply:
        repo = self._repo(request)
        data = repo.files.get(request.match["path"])
        if data is None:
            return json_reply({"message": "Not Found"}, 404)
        return json_reply({"type": "file", "path": request.match["path"], "sha": blob_sha(data), "size": len(data),
                           "encoding": "base64", "content": base64.encodebytes(data).decode()})

    def _issue_json(self, repo: Repo, issue: Issue) -> dict[str, Any]:
        out = {"number": issue.number, "title": issue.title, "body": issue.body, "state": issue.state,
               "updated_at": issue.updated_at, "created_at": issue.created_at, "user": {"login": "octocat"},
               "labels": [{"name": "billing"}],
               "html_url": f"https://github.com/{repo.full_name}/{'pull' if issue.pull else 'issues'}/{issue.number}"}
        if issue.pull:
            out["pull_request"] = {"url": "…"}
        return out

    def _paged(self, request: Request, items: list[Any]) -> Reply:
        per_page = min(int(request.arg("per_page", "30")), self.per_page_cap)
        page = int(request.arg("page", "1"))
        chunk = items[(page - 1) * per_page : page * per_page]
        headers = {}
        if page * per_page < len(items):
            query = {k: v[0] for k, v in request.query.items()}
            query["page"] = str(page + 1)
            headers["Link"] = f'<{self.url}{request.path}?{urlencode(query)}>; rel="next"'
        return json_reply(chunk, headers=headers)

    def list_issues(self, request: Request) -> Reply:
        repo = self._repo(request)
        since = request.arg("since")
        issues = [i for i in repo.issues.values() if not i.deleted and (since is None or i.updated_at >= since)]
        if request.arg("sort") == "updated":
            issues.sort(key=lambda i: i.updated_at, reverse=request.arg("direction", "desc") == "desc")
        return self._paged(request, [self._issue_json(repo, i) for i in issues])

    def get_issue(self, request: Request) -> Reply:
        repo = self._repo(request)
        issue = repo.issues.get(int(request.match["number"]))
        if issue is None:
            return json_reply({"message": "Not Found"}, 404)
        if issue.deleted:
            return json_reply({"message": "This issue was deleted"}, 410)
        return json_reply(self._issue_json(repo, issue))

    def issue_comments(self, request: Request) -> Reply:
        issue = self._repo(request).issues[int(request.match["number"])]
        return self._paged(request, issue.comments)

    def review_comments(self, request: Request) -> Reply:
        issue = self._repo(request).issues[int(request.match["number"])]
        return self._paged(request, issue.review_comments)
