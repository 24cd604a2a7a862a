"""`memlane`: serve, keys, remember, recall, reindex, openapi.

`remember` and `recall` work against a remote API when MEMLANE_API_URL is set (with
MEMLANE_API_KEY), otherwise straight against the local data directory.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import logging
import os
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

from pydantic import ValidationError

from memlane.config import DEFAULT_PORT, Settings

LOOPBACK = {"127.0.0.1", "localhost", "::1"}


def _settings(args: argparse.Namespace) -> Settings:
    return Settings.from_env(
        data_dir=Path(args.data_dir).expanduser() if getattr(args, "data_dir", None) else None
    )


def _err(message: str, code: int = 1) -> int:
    print(f"memlane: {message}", file=sys.stderr)
    return code


def _reports_errors(command):
    """A client's mistake (invalid input, not found, …) is a one-line message and exit code 1,
    the same for a local data directory and a remote API."""

    @functools.wraps(command)
    def run(args: argparse.Namespace) -> int:
        from memlane.domain.errors import MemlaneError

        try:
            return command(args)
        except ValidationError as exc:
            from memlane.api.errors import describe_validation_errors

            return _err(describe_validation_errors(cast(Any, exc.errors())))
        except MemlaneError as exc:
            return _err(exc.message)

    return run


# ------------------------------------------------------------------------- serve


def cmd_serve(args: argparse.Namespace) -> int:
    from memlane.local.server import LocalServer

    settings = _settings(args)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    print(f"memlane: data directory {settings.data_dir}", flush=True)
    from memlane.domain.errors import InvalidInputError

    try:
        allow_private = args.allow_private_network or os.environ.get("MEMLANE_ALLOW_PRIVATE_NETWORK") == "1"
        from memlane.project_memory.cors import ALLOWED_ORIGINS_ENV, parse_origins

        origins = parse_origins(args.allow_origin or []) | parse_origins(
            [os.environ.get(ALLOWED_ORIGINS_ENV, "")], ALLOWED_ORIGINS_ENV)
        server = LocalServer(
            settings,
            host=args.host,
            port=args.port,
            no_auth=args.no_auth,
            allow_all_origins=args.allow_all_origins,
            allow_private_network=allow_private,
            allowed_origins=origins,
        )
    except InvalidInputError as exc:
        return _err(exc.message, 2)
    if args.no_auth:
        print(
            "memlane: --no-auth: requests without a key act as the default organization (loopback only)",
            flush=True,
        )
    if args.allow_all_origins:
        print("memlane: --allow-all-origins: any web page may call this server (for development)", flush=True)
    elif origins:
        print(f"memlane: browser requests also accepted from {', '.join(sorted(origins))}", flush=True)
    if allow_private:
        print(
            "memlane: --allow-private-network: the crawler may fetch loopback and private addresses "
            "(link-local and cloud metadata stay refused)",
            flush=True,
        )
    print("memlane: loading the embedding model…", flush=True)
    key = server.prepare()
    server.stack.services.embedder.embed_query("warm up")
    url = f"http://{args.host}:{args.port}"
    print(f"memlane: listening on {url}", flush=True)
    if key:
        print(f"memlane: API key: {key}", flush=True)
        if server.webapp.built:
            code = server.webapp.sign_in.issue(key)
            print(f"memlane: web app: open {url}/login#code={code} to sign in (the link works once, "
                  "for 15 minutes)", flush=True)
        else:
            print("memlane: the web app is not built (`make web`, which `make run` does)", flush=True)
        print(
            f'memlane: try: curl -s {url}/v3/recall -H "Authorization: Bearer {key}" '
            "-H 'Content-Type: application/json' -d '{\"query\": \"hello\"}'",
            flush=True,
        )
    else:
        print("memlane: create an API key with `memlane keys create`", flush=True)
    server.serve_forever()
    return 0


def cmd_mcp(args: argparse.Namespace) -> int:
    """stdio MCP server. Nothing but the protocol may reach stdout, so logs go to stderr."""
    from memlane.mcp.server import run_stdio

    logging.basicConfig(
        level=logging.WARNING, stream=sys.stderr, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    data_dir = Path(args.data_dir).expanduser() if getattr(args, "data_dir", None) else None
    return run_stdio(data_dir)


def cmd_eval(args: argparse.Namespace) -> int:
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if args.memory:
        from memlane.recall.eval import run as run_memory

        return run_memory(args)
    from memlane.docsets.eval import run

    return run(args)


# ------------------------------------------------------------------------- keys


def _positive_int(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number") from None
    if not 1 <= number <= 100_000:
        raise argparse.ArgumentTypeError("must be between 1 and 100000")
    return number


def cmd_keys(args: argparse.Namespace) -> int:
    from memlane.local.compose import build_local
    from memlane.services.keys import create_key, revoke_key

    stack = build_local(_settings(args), embedder=_NoEmbedder())
    md = stack.metadata
    try:
        if args.keys_cmd == "create":
            secret, key, org = create_key(md, args.org, args.name, args.rate_limit,
                                          can_manage_keys=args.manage_keys)
            print(f"created key {key.id} ({key.prefix}…) for organization {org.name} ({org.id})")
            print("store it now: it is shown once")
            print(secret)
        elif args.keys_cmd == "list":
            orgs = {o.id: o.name for o in md.list_organizations()}
            for k in md.list_api_keys():
                state = f"revoked {k.revoked_at:%Y-%m-%d}" if k.revoked_at else "active"
                print(
                    f"{k.id}  {k.prefix}…  org={orgs.get(k.organization_id, k.organization_id)}  "
                    f"name={k.name}  rate={k.rate_limit_per_minute}/min  {state}"
                    f"{'  manages keys' if k.can_manage_keys else ''}"
                )
        elif args.keys_cmd == "revoke":
            revoke_key(md, args.key_id, datetime.now(UTC))
            print(f"revoked {args.key_id}")
    except Exception as exc:  # noqa: BLE001 - CLI boundary: report, don't trace
        from memlane.domain.errors import MemlaneError

        if isinstance(exc, MemlaneError):
            return _err(exc.message)
        raise
    finally:
        stack.close()
    return 0


class _NoEmbedder:
    """Key management never embeds; avoid loading the model for it."""

    id = "none"
    dimension = 384

    def embed_documents(self, texts):  # pragma: no cover - never called
        raise RuntimeError("no embedder in this command")

    def embed_query(self, text):  # pragma: no cover - never called
        raise RuntimeError("no embedder in this command")


# ------------------------------------------------------------------------- remember / recall


class _Client:
    """Closes what the client opened when a command is done with it."""

    def __enter__(self):
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        pass


class _Remote(_Client):
    def __init__(self, url: str, key: str | None) -> None:
        import httpx

        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self.client = httpx.Client(base_url=url.rstrip("/"), headers=headers, timeout=120)

    def close(self) -> None:
        self.client.close()

    def call(self, method: str, path: str, body: dict | None = None) -> dict:
        r = self.client.request(method, path, json=body)
        data = r.json() if r.content else {}
        if r.status_code >= 400:
            raise SystemExit(_err(f"{r.status_code}: {data.get('error', r.text)}"))
        return data


class _Local(_Client):
    def close(self) -> None:
        self.stack.close()

    def __init__(self, args: argparse.Namespace) -> None:
        from memlane.local.compose import build_local
        from memlane.local.worker import IngestWorker

        self.stack = build_local(_settings(args))
        self.worker = IngestWorker(self.stack.services, self.stack.queue)
        md = self.stack.metadata
        orgs = md.list_organizations()
        if not orgs:
            from memlane.services.keys import ensure_organization

            ensure_organization(md, "default")
            orgs = md.list_organizations()
        org_name = os.environ.get("MEMLANE_ORG", "default")
        org = next((o for o in orgs if o.slug == org_name or o.name == org_name), orgs[0])
        from memlane.domain.principal import Principal

        self.who = Principal(organization_id=org.id, key_id="cli", user_id="cli")


def _project_id(client, project: str | None) -> str | None:
    if not project:
        return None
    if isinstance(client, _Remote):
        projects = client.call("GET", "/v3/projects")["projects"]
        for p in projects:
            if project in (p["id"], p["name"], p["slug"]):
                return p["id"]
        return client.call("POST", "/v3/projects", {"name": project})["id"]
    from memlane.services.projects import find_project_by_name

    return find_project_by_name(client.stack.services, client.who, project, create=True).id


def _client(args: argparse.Namespace):
    url = os.environ.get("MEMLANE_API_URL")
    if url:
        return _Remote(url, os.environ.get("MEMLANE_API_KEY"))
    return _Local(args)


def _read_content(args: argparse.Namespace) -> tuple[str, str | None]:
    if args.file:
        path = Path(args.file)
        data = path.read_bytes()
        if data.startswith(b"%PDF"):
            import base64

            return base64.b64encode(data).decode(), "pdf"
        return data.decode("utf-8", errors="replace"), None
    if args.text and args.text != "-":
        return args.text, None
    return sys.stdin.read(), None


@_reports_errors
def cmd_remember(args: argparse.Namespace) -> int:
    from memlane.domain.requests import MemoryIn

    content, detected_type = _read_content(args)
    with _client(args) as client:
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
        project_id = _project_id(client, args.project)
        if project_id:
            body["project_id"] = project_id
        if isinstance(client, _Remote):
            out = client.call("POST", "/v3/memory", body)
        else:
            from memlane.services.memory import save_memory

            print("memlane: saving (the first save loads the embedding model)…", file=sys.stderr, flush=True)
            out = save_memory(client.stack.services, client.who, MemoryIn(**body), inline=True).model_dump(
                mode="json"
            )
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        state = "already saved" if out.get("duplicate") else out["status"]
        print(f"{out['id']}  {out['title']}  ({out['chunk_count']} chunks, {state})")
        if out.get("summary"):
            print(f"  {out['summary']}")
    return 0


@_reports_errors
def cmd_recall(args: argparse.Namespace) -> int:
    from memlane.domain.requests import RecallIn

    with _client(args) as client:
        body: dict[str, Any] = {"query": args.query, "limit": args.limit}
        project_id = _project_id(client, args.project)
        if project_id:
            body["project_id"] = project_id
        if isinstance(client, _Remote):
            out = client.call("POST", "/v3/recall", body)
        else:
            from memlane.recall.service import recall

            out = recall(client.stack.services, client.who, RecallIn(**body)).model_dump(mode="json")
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    if not out["results"]:
        print("no memories found")
    for i, r in enumerate(out["results"], 1):
        print(f"[{i}] {r['title']}  (score {r['score']:.3f})  {r['document_id']}")
        if r["chunks"]:
            text = " ".join(r["chunks"][0]["content"].split())
            print(f"    {text[:300]}{'…' if len(text) > 300 else ''}")
        if r.get("source_url"):
            print(f"    source: {r['source_url']}")
    print(f"({out['total']} results in {out['query_time_ms']:.0f} ms)")
    return 0


# ------------------------------------------------------------------------- maintenance


def cmd_reindex(args: argparse.Namespace) -> int:
    """Write every document again with the current embedder (after switching models)."""
    from memlane.local.compose import build_local
    from memlane.local.reindex import requeue_everything
    from memlane.local.worker import IngestWorker

    stack = build_local(_settings(args))
    svc = stack.services
    try:
        total = requeue_everything(svc, stack.metadata, stack.index, stack.queue)
        worker = IngestWorker(svc, stack.queue)
        while worker.run_once():
            print(f"\rre-embedded {worker.processed} of {total} documents", end="", file=sys.stderr, flush=True)
        left = stack.queue.pending_count()
        print(f"\nreindexed {worker.processed} documents with {svc.embedder.id}"
              + (f"; {left} are queued for a retry (see their status)" if left else ""))
    finally:
        stack.close()
    return 0


def cmd_forget(args: argparse.Namespace) -> int:
    """Run the auto-forget sweep now (the server runs it hourly)."""
    from memlane.documents.forget import forget_expired
    from memlane.local.compose import build_local

    stack = build_local(_settings(args))
    try:
        report = forget_expired(stack.services)
    finally:
        stack.close()
    print(json.dumps(report.as_dict()) if args.json else f"forgot {report.forgotten} expired documents")
    return 0


def cmd_doctor(args: argparse.Namespace) -> int:
    if args.aws:
        from memlane.adapters.aws.compose import build_aws_services
        from memlane.adapters.aws.doctor import AwsInventory
        from memlane.services.doctor import examine as examine_services

        services = build_aws_services(_settings(args))
        report = examine_services(services, AwsInventory(services), repair=args.repair)
    else:
        from memlane.local.compose import build_local
        from memlane.local.doctor import examine

        stack = build_local(_settings(args))
        try:
            report = examine(stack, repair=args.repair)
        finally:
            stack.close()
    summary = report.as_dict()
    if args.json:
        print(json.dumps(summary))
    else:
        for name, value in summary.items():
            print(f"{name:>20}: {value}")
    return 0 if report.total == 0 or report.repaired else 1


class _Store:
    """The store an export reads or an import writes: a local data directory, or (--aws) the
    deployed stack's DynamoDB, S3 and OpenSearch, found through the same environment variables
    the Lambda functions read (MEMLANE_TABLE, MEMLANE_BUCKET, MEMLANE_SEARCH_ENDPOINT, …)."""

    def __init__(self, args: argparse.Namespace) -> None:
        from memlane.domain.principal import Principal

        self._local = None
        if getattr(args, "aws", False):
            from memlane.adapters.aws.compose import build_aws_services

            self.services = build_aws_services(_settings(args).model_copy(update={"inline_max_chars": 10**9}))
            from memlane.services.keys import ensure_organization

            org, _ = ensure_organization(self.services.metadata, args.org)
            self.who = Principal(organization_id=org.id, key_id="cli", user_id="cli")
        else:
            self._local = _Local(args)
            self.services, self.who = self._local.stack.services, self._local.who

    def close(self) -> None:
        if self._local is not None:
            self._local.stack.close()


def cmd_export(args: argparse.Namespace) -> int:
    from memlane.domain.errors import MemlaneError
    from memlane.services.projects import find_project_by_name
    from memlane.services.transfer import export_project

    store = _Store(args)
    try:
        project = find_project_by_name(store.services, store.who, args.project)
        with contextlib.ExitStack() as stack:
            out = stack.enter_context(open(args.out, "w", encoding="utf-8")) if args.out else sys.stdout
            n = 0
            for line in export_project(store.services, store.who, project):
                out.write(line + "\n")
                n += 1
        print(f"exported {n - 1} documents from {project.name}", file=sys.stderr)
    except MemlaneError as exc:
        return _err(exc.message)
    finally:
        store.close()
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    from memlane.domain.errors import MemlaneError
    from memlane.services.transfer import import_lines

    store = _Store(args)
    try:
        with open(args.file, encoding="utf-8") as f:
            result = import_lines(store.services, store.who, f, project_name=args.project)
    except MemlaneError as exc:
        return _err(exc.message)
    finally:
        store.close()
    print(json.dumps(result))
    return 0


@_reports_errors
def cmd_connect(args: argparse.Namespace) -> int:
    """`memlane connect git PATH`: sync a local clone's committed files into a project, now and
    then every 15 minutes while `memlane serve` runs on the same data directory."""
    if os.environ.get("MEMLANE_API_URL"):
        return _err("git connections read a clone on this machine: run without MEMLANE_API_URL, "
                    "against the data directory of the server on this machine (--data-dir)")
    from memlane.connections.service import connect_git, connection_out
    from memlane.connections.sync import sync_connection

    client = _Local(args)
    try:
        project_id = _project_id(client, args.project)
        conn = connect_git(client.stack.services, client.who, args.path, project_id=project_id,
                           repo_id=args.repo_id, branch=args.branch)
        print(f"connection {conn.id}: {conn.name}", file=sys.stderr)
        if not args.no_sync:
            result = sync_connection(client.stack.services, conn.organization_id, conn.id)
            client.worker.drain()  # anything the write path queued
            if result is None:
                print("a sync of this connection is running elsewhere (memlane serve); it will pick it up",
                      file=sys.stderr)
            else:
                print(f"synced: {result.added} added, {result.updated} updated, {result.deleted} deleted, "
                      f"{len(result.errors)} errors", file=sys.stderr)
                for error in result.errors:
                    print(f"  {error}", file=sys.stderr)
        ports = client.stack.services.connections
        current = ports.store.get_connection(conn.organization_id, conn.id) if ports else None
        print(json.dumps(connection_out(current or conn).model_dump(mode="json")))
    finally:
        client.close()
    return 0


@_reports_errors
def cmd_connections(args: argparse.Namespace) -> int:
    """List, sync or delete the data directory's connections (the API offers the same remotely)."""
    if os.environ.get("MEMLANE_API_URL"):
        return _err("use the API for a remote server: GET /v3/connections, POST /v3/connections/{id}/sync, "
                    "DELETE /v3/connections/{id}")
    from memlane.connections import service
    from memlane.connections.sync import sync_connection

    client = _Local(args)
    svc, who = client.stack.services, client.who
    try:
        if args.connections_cmd == "list":
            for conn in service.list_connections(svc, who).connections:
                last = conn.last_result
                print(f"{conn.id}  {conn.status.value:<11} {conn.name}"
                      + (f"  last sync {conn.last_synced_at:%Y-%m-%d %H:%M} (+{last.added} ~{last.updated} "
                         f"-{last.deleted}, {len(last.errors)} errors)" if last and conn.last_synced_at else ""))
        elif args.connections_cmd == "sync":
            conn = service.get_connection(svc, who, args.connection_id)
            result = sync_connection(svc, who.organization_id, conn.id)
            client.worker.drain()
            print(json.dumps(result.model_dump(mode="json") if result else {"running": "elsewhere, or not active"}))
        elif args.connections_cmd == "delete":
            out, _ = service.delete_connection(svc, who, args.connection_id, args.remove_documents)
            print(json.dumps(out.model_dump(mode="json")))
    finally:
        client.close()
    return 0


def cmd_openapi(args: argparse.Namespace) -> int:
    from memlane.api.app import MemlaneApi
    from memlane.ports import Services

    # The document describes the routes; no request runs, so no services are composed.
    print(json.dumps(MemlaneApi(lambda: cast(Services, None)).openapi(), indent=2))
    return 0


def cmd_invoke(args: argparse.Namespace) -> int:
    """Run a Lambda entry point here with a sample event, against whatever AWS the environment
    points at (credentials, AWS_REGION and the stack's MEMLANE_* variables)."""
    root = Path(__file__).resolve().parent.parent  # functions/ sits beside memlane/ in a checkout
    for path in (str(Path.cwd()), str(root)):
        if path not in sys.path:
            sys.path.insert(0, path)
    try:
        from functions.invoke import invoke
    except ModuleNotFoundError:
        return _err("functions/ not found: run `memlane invoke` from a memlane checkout")
    event = json.loads(sys.stdin.read() if args.event == "-" else Path(args.event).read_text())
    # A handler prints its logs and metrics (CloudWatch EMF lines) to stdout, as Lambda expects;
    # here stdout carries only the result, so `memlane invoke ... | jq` works.
    with contextlib.redirect_stdout(sys.stderr):
        result = invoke(args.function, event)
    print(json.dumps(result, indent=2, default=str))
    return 0


# ------------------------------------------------------------------------- parser


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="memlane", description="Long-term memory and documentation recall.")
    p.add_argument("--data-dir", help="data directory (default ~/.memlane or $MEMLANE_DATA_DIR)")
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("serve", help="run the local server")
    s.add_argument("--host", default="127.0.0.1")
    s.add_argument("--port", type=int, default=DEFAULT_PORT)
    s.add_argument("--data-dir", dest="data_dir", default=argparse.SUPPRESS)
    s.add_argument(
        "--no-auth",
        action="store_true",
        help="treat requests without a key as the default organization (loopback hosts only)",
    )
    s.add_argument(
        "--allow-all-origins",
        action="store_true",
        help="accept browser requests from any origin (default: localhost and ChatGPT only)",
    )
    s.add_argument(
        "--allow-origin",
        action="append",
        metavar="ORIGIN",
        help="also accept browser requests from this exact origin, e.g. the browser extension's "
        "chrome-extension://<id> or moz-extension://<uuid> (repeatable; also MEMLANE_ALLOWED_ORIGINS, "
        "comma-separated)",
    )
    s.add_argument(
        "--allow-private-network",
        action="store_true",
        help="let the crawler index docs on loopback and private addresses (also "
        "MEMLANE_ALLOW_PRIVATE_NETWORK=1); link-local and cloud metadata stay refused",
    )
    s.set_defaults(func=cmd_serve)

    ev = sub.add_parser(
        "eval",
        help="crawl docs served on loopback, measure /retrieve (hit@5, MRR@10); "
        "with --memory, conversation recall through /v3/recall",
    )
    from memlane.docsets.eval import add_arguments as eval_arguments
    from memlane.recall.eval import add_arguments as memory_eval_arguments

    eval_arguments(ev)
    memory_eval_arguments(ev)
    ev.set_defaults(func=cmd_eval)

    m = sub.add_parser("mcp", help="run the MCP server on stdio (MEMLANE_API_URL, or the data directory)")
    m.add_argument("--data-dir", dest="data_dir", default=argparse.SUPPRESS)
    m.set_defaults(func=cmd_mcp)

    k = sub.add_parser("keys", help="manage API keys")
    k.add_argument("--data-dir", dest="data_dir", default=argparse.SUPPRESS)
    ks = k.add_subparsers(dest="keys_cmd", required=True)
    kc = ks.add_parser("create", help="create a key (and the organization when new)")
    kc.add_argument("--org", default="default")
    kc.add_argument("--name", default="default")
    kc.add_argument("--manage-keys", action="store_true",
                    help="the key may list, create and revoke its organization's keys (web app settings)")
    kc.add_argument("--rate-limit", dest="rate_limit", type=_positive_int, default=100,
                    help="requests per minute for this key (a bulk save counts each item; default 100)")
    ks.add_parser("list", help="list keys")
    kr = ks.add_parser("revoke", help="revoke a key by id or prefix")
    kr.add_argument("key_id")
    k.set_defaults(func=cmd_keys)

    r = sub.add_parser("remember", help="save text, a file, or stdin")
    r.add_argument("text", nargs="?", help="the text ('-' or nothing reads stdin)")
    r.add_argument("--file", "-f")
    r.add_argument("--project", "-p")
    r.add_argument("--title", "-t")
    r.add_argument("--tags", help="comma-separated")
    r.add_argument("--forget-after", help="ISO 8601 date-time")
    r.add_argument("--content-type")
    r.add_argument("--json", action="store_true")
    r.add_argument("--data-dir", dest="data_dir", default=argparse.SUPPRESS)
    r.set_defaults(func=cmd_remember)

    q = sub.add_parser("recall", help="search memories")
    q.add_argument("query")
    q.add_argument("--project", "-p")
    q.add_argument("--limit", "-n", type=int, default=5)
    q.add_argument("--json", action="store_true")
    q.add_argument("--data-dir", dest="data_dir", default=argparse.SUPPRESS)
    q.set_defaults(func=cmd_recall)

    x = sub.add_parser("reindex", help="re-embed everything with the current embedder")
    x.add_argument("--data-dir", dest="data_dir", default=argparse.SUPPRESS)
    x.set_defaults(func=cmd_reindex)

    f = sub.add_parser("forget", help="remove documents whose forget_after has passed")
    f.add_argument("--json", action="store_true")
    f.add_argument("--data-dir", dest="data_dir", default=argparse.SUPPRESS)
    f.set_defaults(func=cmd_forget)

    d = sub.add_parser("doctor", help="compare the stores and report (or --repair) orphans")
    d.add_argument("--repair", action="store_true")
    d.add_argument("--json", action="store_true")
    d.add_argument("--data-dir", dest="data_dir", default=argparse.SUPPRESS)
    d.add_argument(
        "--aws",
        action="store_true",
        help="check the deployed stack (AWS env vars: MEMLANE_TABLE, MEMLANE_BUCKET, …) instead",
    )
    d.set_defaults(func=cmd_doctor)

    e = sub.add_parser("export", help="write a project's documents (with versions) as JSON lines")
    e.add_argument("--project", "-p", required=True)
    e.add_argument("--out", "-o", help="file (default stdout)")
    e.add_argument("--data-dir", dest="data_dir", default=argparse.SUPPRESS)
    e.add_argument("--aws", action="store_true", help="read the deployed stack (AWS env vars) instead")
    e.add_argument("--org", default="default", help="with --aws: the organization (slug)")
    e.set_defaults(func=cmd_export)

    i = sub.add_parser("import", help="restore an export into a data directory or (--aws) a deployed stack")
    i.add_argument("file")
    i.add_argument("--project", "-p", help="target project (default: the exported project's name)")
    i.add_argument("--data-dir", dest="data_dir", default=argparse.SUPPRESS)
    i.add_argument("--aws", action="store_true", help="write to the deployed stack (AWS env vars)")
    i.add_argument("--org", default="default", help="with --aws: the organization (slug), created if new")
    i.set_defaults(func=cmd_import)

    cn = sub.add_parser("connect", help="connect a source to sync into memory (git: a local clone)")
    cn.add_argument("--data-dir", dest="data_dir", default=argparse.SUPPRESS)
    cns = cn.add_subparsers(dest="source", required=True)
    cg = cns.add_parser("git", help="sync a local git clone's committed files (no network)")
    cg.add_argument("path")
    cg.add_argument("--project", "-p", help="target project (created if new; default: the default project)")
    cg.add_argument("--repo-id", help="raged repoId (default: the clone's folder name)")
    cg.add_argument("--branch", help="branch or commit to sync (default: HEAD)")
    cg.add_argument("--no-sync", action="store_true", help="only create the connection; `memlane serve` syncs it")
    cg.add_argument("--data-dir", dest="data_dir", default=argparse.SUPPRESS)
    cn.set_defaults(func=cmd_connect)

    cl = sub.add_parser("connections", help="list, sync or delete connections (local data directory)")
    cl.add_argument("--data-dir", dest="data_dir", default=argparse.SUPPRESS)
    cls = cl.add_subparsers(dest="connections_cmd", required=True)
    cls.add_parser("list", help="list connections with their last sync")
    csy = cls.add_parser("sync", help="sync one connection now")
    csy.add_argument("connection_id")
    cdl = cls.add_parser("delete", help="delete a connection")
    cdl.add_argument("connection_id")
    cdl.add_argument("--remove-documents", action="store_true", help="also remove what it brought in")
    cl.set_defaults(func=cmd_connections)

    o = sub.add_parser("openapi", help="print the OpenAPI document")
    o.set_defaults(func=cmd_openapi)
    iv = sub.add_parser("invoke", help="run a Lambda handler with an event file (needs AWS env vars)")
    iv.add_argument(
        "function",
        help="api, authorizer, admin_keys, ingest_consumer, extract … mark_failed, "
        "forget_job, refresh_job, page_worker",
    )
    iv.add_argument("event", help="event JSON file (events/…), or - for stdin")
    iv.set_defaults(func=cmd_invoke)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args) or 0


if __name__ == "__main__":
    raise SystemExit(main())
