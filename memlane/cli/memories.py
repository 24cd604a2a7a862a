"""`memlane remember` and `memlane recall`: written once against the API client, answered by a
remote server (MEMLANE_API_URL) or by the local runtime in process."""

from __future__ import annotations

import argparse
import base64
import json
import sys
from pathlib import Path
from typing import Any

from memlane_client import MemlaneClient, MemlaneError

from memlane.cli.common import (
    LocalClient,
    data_dir_option,
    existing_data_dir,
    no_data_dir,
    open_client,
    org_option,
    plural,
    read_file_argument,
    remote_url,
    reports_errors,
)

QUEUED_STATES = ("queued", "processing")


def add_parsers(sub: argparse._SubParsersAction) -> None:
    r = sub.add_parser("remember", help="save text, a file, or stdin")
    r.add_argument("text", nargs="?", help="the text ('-' or nothing reads stdin)")
    r.add_argument("--file", "-f", help="save this file instead (text of any kind, or a PDF)")
    r.add_argument("--project", "-p", help="project name or id (created when new; default: the default project)")
    r.add_argument("--title", "-t", help="title (default: the file name, or one drawn from the content)")
    r.add_argument("--tags", help="comma-separated")
    r.add_argument("--forget-after", help="ISO 8601 date-time")
    r.add_argument("--content-type", help="text, markdown, html, json, code, pdf, email, … (default: detected from the content)")
    r.add_argument("--idempotency-key", help="a retry with the same key saves once (Idempotency-Key)")
    r.add_argument("--json", action="store_true", help="print the saved memory as JSON")
    org_option(r)
    data_dir_option(r)
    r.set_defaults(func=cmd_remember)

    q = sub.add_parser("recall", help="search memories")
    q.add_argument("query", help="what to look for, in your own words")
    q.add_argument("--project", "-p", help="search only this project (name or id; default: every project)")
    q.add_argument("--limit", "-n", type=int, default=5, help="most results to show (default 5)")
    q.add_argument("--strict", action="store_true",
                   help="only strong matches: nothing when none is strong (default: weak matches too, marked)")
    q.add_argument("--json", action="store_true", help="print the API's answer as JSON")
    org_option(q)
    data_dir_option(q)
    q.set_defaults(func=cmd_recall)


def read_content(args: argparse.Namespace) -> tuple[str, str | None]:
    if args.file:
        data = read_file_argument(args.file, "--file")
        if data.startswith(b"%PDF"):
            return base64.b64encode(data).decode(), "pdf"
        return data.decode("utf-8", errors="replace"), None
    if args.text and args.text != "-":
        return args.text, None
    return sys.stdin.read(), None


def project_id(client: MemlaneClient, project: str | None) -> str | None:
    """The project a save goes to (created when new)."""
    return client.project_id(project) if project else None


def existing_project_id(client: MemlaneClient, project: str | None) -> str | None:
    """The project a read looks in: it must exist (a read never creates one)."""
    if not project:
        return None
    found = client.project_id(project, create=False)
    if found is None:
        names = ", ".join(repr(p["name"]) for p in client.projects()) or "none yet"
        raise MemlaneError(404, f"project: no project named {project!r}; the projects are: {names}")
    return found


def memory_body(args: argparse.Namespace, content: str, detected_type: str | None) -> dict[str, Any]:
    body: dict[str, Any] = {"content": content}
    if args.title:
        body["title"] = args.title
    elif args.file:
        body["title"] = Path(args.file).name
    if args.tags:
        body["metadata"] = {"tags": [t.strip() for t in args.tags.split(",") if t.strip()]}
    if args.forget_after:
        body["forget_after"] = args.forget_after
    if args.content_type or detected_type:
        body["content_type"] = args.content_type or detected_type
    return body


@reports_errors
def cmd_remember(args: argparse.Namespace) -> int:
    content, detected_type = read_content(args)
    with open_client(args) as client:
        body = memory_body(args, content, detected_type)
        pid = project_id(client, args.project)
        if pid:
            body["project_id"] = pid
        if isinstance(client, LocalClient):
            print("memlane: saving (the first save loads the embedding model)…", file=sys.stderr, flush=True)
        out: dict[str, Any] = dict(client.save(body, idempotency_key=args.idempotency_key))
        if isinstance(client, LocalClient) and out.get("status") in QUEUED_STATES:
            # Too large for the request: the server's worker would finish it; here, this command does.
            client.runtime.drain()
            done = client.document(out["id"])
            out.update({k: done[k] for k in ("status", "chunk_count", "summary") if k in done})
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        state = "already saved" if out.get("duplicate") else out["status"]
        print(f"{out['id']}  {out['title']}  ({plural(out['chunk_count'], 'chunk')}, {state})")
        if out.get("summary"):
            print(f"  {out['summary']}")
    return 0


@reports_errors
def cmd_recall(args: argparse.Namespace) -> int:
    if not remote_url(args) and existing_data_dir(args) is None:
        return no_data_dir(args)
    with open_client(args) as client:
        strict: dict[str, Any] = {"strict": True} if getattr(args, "strict", False) else {}
        out = client.recall(args.query, limit=args.limit, project_id=existing_project_id(client, args.project),
                            **strict)
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    results = out["results"]
    if not results:
        print("no memories found")
    elif all(r.get("match") == "weak" for r in results):
        print("no strong match; possibly related (low confidence):")
    dim = sys.stdout.isatty()
    for i, r in enumerate(results, 1):
        weak = r.get("match") == "weak"
        lines = [f"[{i}] {r['title']}  (score {r['score']:.3f}{'; weak match' if weak else ''})  {r['document_id']}"]
        if r["chunks"]:
            text = " ".join(r["chunks"][0]["content"].split())
            lines.append(f"    {text[:300]}{'…' if len(text) > 300 else ''}")
        if r.get("source_url"):
            lines.append(f"    source: {r['source_url']}")
        for line in lines:
            print(f"\033[2m{line}\033[0m" if weak and dim else line)
    print(f"({plural(out['total'], 'result')} in {out['query_time_ms']:.0f} ms)")
    return 0
