"""`memlane docs index|list|status|refresh|delete`: documentation sets, through the API (the
Mem-Oracle routes /index, /status, /refresh and /docset/{id}) of a server (MEMLANE_API_URL) or of
the local runtime in process, which then runs the crawl itself while the command follows it.

`index` and `refresh` follow the crawl until the docset is ready or failed: a progress bar of pages
done out of pages found on a terminal, a plain line at each change otherwise (logs, CI). Ctrl-C
stops following; the crawl goes on on a server, and a local crawl resumes where it stopped on the
next `memlane serve`, `memlane docs refresh` or `index` (the crawl state is durable)."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from typing import Any, TextIO
from urllib.parse import urlsplit

from memlane_client import MemlaneClient, MemlaneError

from memlane.cli.common import (
    LocalClient,
    cli_principal,
    configuration_of,
    data_dir_option,
    err,
    existing_data_dir,
    local_runtime,
    no_data_dir,
    org_option,
    plural,
    remote_url,
    reports_errors,
)
from memlane.cli.common import open_client as open_remote_or_local
from memlane.config.local import ENV_ALLOW_PRIVATE_NETWORK

POLL_S = 0.5
BAR_WIDTH = 28

PRIVATE_HELP = ("without MEMLANE_API_URL: let the crawler fetch loopback and private addresses, for docs served on "
                f"this machine or your network (also {ENV_ALLOW_PRIVATE_NETWORK}=1)")


def add_parsers(sub: argparse._SubParsersAction) -> None:
    d = sub.add_parser("docs", help="documentation sets: index a site, list, status, refresh, delete")
    ds = d.add_subparsers(dest="docs_cmd", required=True)

    i = ds.add_parser("index", help="crawl and index a documentation site, showing progress until ready")
    i.add_argument("url", help="the page to start from; pages under its directory are crawled")
    i.add_argument("--name", help="the docset's name (default: the site's host)")
    i.add_argument("--path", action="append", metavar="PREFIX", dest="paths",
                   help="crawl only under this path prefix (repeatable; default: the URL's directory)")
    i.add_argument("--max-pages", type=int, help="page cap for this docset (default 5000)")
    i.add_argument("--allow-private-network", action="store_true", help=PRIVATE_HELP)
    i.add_argument("--no-wait", action="store_true", help="return once the crawl is queued (servers only)")
    i.set_defaults(func=cmd_docs)

    ls = ds.add_parser("list", help="list documentation sets")
    ls.set_defaults(func=cmd_docs)

    s = ds.add_parser("status", help="a docset's progress, and why pages were skipped or failed")
    s.add_argument("docset", help="docset id, a unique prefix of it, or its name")
    s.set_defaults(func=cmd_docs)

    r = ds.add_parser("refresh", help="fetch a docset's pages again (changed pages are re-indexed)")
    r.add_argument("docset", help="docset id, a unique prefix of it, or its name")
    r.add_argument("--full", action="store_true", help="re-embed every page, changed or not")
    r.add_argument("--allow-private-network", action="store_true", help=PRIVATE_HELP)
    r.add_argument("--no-wait", action="store_true", help="return once the refresh is queued (servers only)")
    r.set_defaults(func=cmd_docs)

    x = ds.add_parser("delete", help="delete a docset with its pages and everything indexed from them")
    x.add_argument("docset", help="docset id, a unique prefix of it, or its name")
    x.set_defaults(func=cmd_docs)
    data_dir_option(d, i, ls, s, r, x)
    org_option(d, i, ls, s, r, x)


# --------------------------------------------------------------------------- the client


def open_docs_client(args: argparse.Namespace) -> MemlaneClient:
    """A server's API, or the local runtime with documentation sets (its crawler runs in this
    process for index and refresh)."""
    if remote_url(args):
        return open_remote_or_local(args)
    crawls = args.docs_cmd in ("index", "refresh") and not getattr(args, "no_wait", False)
    private = getattr(args, "allow_private_network", False) or configuration_of(args).local.allow_private_network
    runtime = local_runtime(args, docsets=True, allow_private_network=private)
    try:
        client = LocalClient(runtime, cli_principal(runtime, args))
        if crawls:
            runtime.start_crawls()
        return client
    except BaseException:
        runtime.close()
        raise


@reports_errors
def cmd_docs(args: argparse.Namespace) -> int:
    if not remote_url(args) and args.docs_cmd != "index" and existing_data_dir(args) is None:
        return no_data_dir(args)
    with open_docs_client(args) as client:
        command: Callable[[MemlaneClient, argparse.Namespace], int] = COMMANDS[args.docs_cmd]
        return command(client, args)


# --------------------------------------------------------------------------- commands


def docs_index(client: MemlaneClient, args: argparse.Namespace) -> int:
    parts = urlsplit(args.url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return err(f"url: must be an absolute http or https URL, not {args.url!r}", 2)
    body: dict[str, Any] = {"baseUrl": args.url.strip(), "seedSlug": args.url.strip()}
    if args.name:
        body["name"] = args.name
    if args.paths:
        body["allowedPaths"] = args.paths
    if args.max_pages:
        body["maxPages"] = args.max_pages
    out = client.docs_index(body)
    docset = client.docset(out["docsetId"])
    print(f"{docset['name']}  {docset['id']}  {docset['baseUrl']}")
    if args.no_wait:
        return _queued(client, docset)
    return follow(client, docset["id"])


def docs_list(client: MemlaneClient, args: argparse.Namespace) -> int:
    docsets = client.docs_status()["docsets"]
    if not docsets:
        print("no documentation sets (add one with `memlane docs index URL`)")
        return 0
    for d in docsets:
        ix = d["indexStatus"]
        print(f"{d['id']}  {d['name']}  {d['status']}  {_done(ix)}/{plural(ix['totalPages'], 'page')}  "
              f"{plural(ix['totalChunks'], 'chunk')}  {d['baseUrl']}")
    return 0


def docs_status(client: MemlaneClient, args: argparse.Namespace) -> int:
    docset = client.docset(resolve(client, args.docset))
    ix = docset["indexStatus"]
    print(f"{docset['name']}  {docset['id']}")
    print(f"  site:    {docset['baseUrl']}")
    print(f"  status:  {docset['status']}")
    print(f"  pages:   {plural(ix['totalPages'], 'page')}: {ix['indexedPages']} indexed, "
          f"{ix['pendingPages']} pending, {ix['skippedPages']} skipped, {plural(ix['errorPages'], 'error')}")
    print(f"  chunks:  {ix['totalChunks']}")
    for state in ("skipped", "error"):
        pages = _all_pages(client, docset["id"], state)
        if pages:
            print(f"  {state}:")
        for p in pages:
            print(f"    {p['url']}  {p.get('errorMessage') or ''}".rstrip())
    return 1 if docset["status"] == "error" else 0


def docs_refresh(client: MemlaneClient, args: argparse.Namespace) -> int:
    docset_id = resolve(client, args.docset)
    out = client.docs_refresh({"docsetId": docset_id, "force": True, "fullReindex": bool(args.full)})
    print(out["message"])
    if args.no_wait:
        return _queued(client, client.docset(docset_id))
    return follow(client, docset_id)


def docs_delete(client: MemlaneClient, args: argparse.Namespace) -> int:
    docset = client.docset(resolve(client, args.docset))
    ix = docset["indexStatus"]
    out = client.delete_docset(docset["id"])
    receipt = f"; deletion receipt {out['receiptId']}" if out.get("receiptId") else ""
    checked = " (every store checked: nothing left)" if out.get("verified") else ""
    print(f"deleted {docset['name']} ({docset['id']}): {plural(ix['totalPages'], 'page')}, "
          f"{plural(ix['totalChunks'], 'chunk')} removed{receipt}{checked}")
    return 0


COMMANDS: dict[str, Callable[[MemlaneClient, argparse.Namespace], int]] = {
    "index": docs_index, "list": docs_list, "status": docs_status, "refresh": docs_refresh, "delete": docs_delete,
}


# --------------------------------------------------------------------------- helpers


def resolve(client: MemlaneClient, wanted: str) -> str:
    """The id of the docset whose id is `wanted`, whose id starts with it (one only), or whose name it is."""
    docsets = client.docs_status()["docsets"]
    for d in docsets:
        if d["id"] == wanted:
            return d["id"]
    matches = [d for d in docsets if d["id"].startswith(wanted)] or [d for d in docsets if d["name"] == wanted]
    if len(matches) == 1:
        return matches[0]["id"]
    if not matches:
        raise MemlaneError(404, f"docset: no documentation set {wanted!r} (see `memlane docs list`)")
    names = ", ".join(f"{d['id']} ({d['name']})" for d in matches)
    raise MemlaneError(400, f"docset: {wanted!r} matches {len(matches)} documentation sets: {names}")


def _done(ix: dict[str, Any]) -> int:
    return int(ix["indexedPages"]) + int(ix["skippedPages"]) + int(ix["errorPages"])


def _all_pages(client: MemlaneClient, docset_id: str, status: str) -> list[dict[str, Any]]:
    return [dict(page) for page in client.iter_docset_pages(docset_id, status=status, page_size=500)]


def _queued(client: MemlaneClient, docset: dict[str, Any]) -> int:
    if isinstance(client, LocalClient):
        print("queued: the crawl runs while `memlane serve` runs (or run this without --no-wait)")
    else:
        print(f"queued: follow it with `memlane docs status {docset['id']}`")
    return 0


class Progress:
    """Pages done out of pages found: a bar redrawn in place on a terminal, a line per change
    otherwise."""

    def __init__(self, out: TextIO | None = None) -> None:
        self.out = out or sys.stdout
        self.tty = self.out.isatty()
        self.last: tuple[int, int] | None = None

    def show(self, done: int, total: int) -> None:
        if (done, total) == self.last:
            return
        self.last = (done, total)
        if self.tty:
            filled = BAR_WIDTH * done // total if total else 0
            bar = "#" * filled + "-" * (BAR_WIDTH - filled)
            self.out.write(f"\r[{bar}] {done}/{plural(total, 'page')}")
        else:
            self.out.write(f"{done}/{plural(total, 'page')} done\n")
        self.out.flush()

    def end(self) -> None:
        if self.tty and self.last is not None:
            self.out.write("\n")
            self.out.flush()


def follow(client: MemlaneClient, docset_id: str, *, poll_s: float = POLL_S,
           sleep: Callable[[float], None] = time.sleep) -> int:
    """Show progress until the docset is ready (exit 0) or failed (exit 1)."""
    progress = Progress()
    try:
        while True:
            docset = client.docset(docset_id)
            ix = docset["indexStatus"]
            progress.show(_done(ix), int(ix["totalPages"]))
            if docset["status"] != "indexing":
                break
            sleep(poll_s)
    except KeyboardInterrupt:
        progress.end()
        where = ("it resumes on the next `memlane serve` or `memlane docs refresh`"
                 if isinstance(client, LocalClient) else "the crawl goes on on the server")
        print(f"stopped following: {where} (`memlane docs status {docset_id}`)", file=sys.stderr)
        return 130
    progress.end()
    summary = (f"{ix['indexedPages']} indexed, {ix['skippedPages']} skipped, {plural(ix['errorPages'], 'error')}; "
               f"{plural(ix['totalChunks'], 'chunk')}")
    if docset["status"] == "error":
        print(f"failed: {summary} (`memlane docs status {docset_id}` says why)")
        return 1
    print(f"ready: {summary}")
    return 0
