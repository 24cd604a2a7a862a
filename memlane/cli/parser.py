"""The `memlane` command line: one parser, each command group adding its own subcommands."""

from __future__ import annotations

import argparse

import memlane.cli.admin as admin
import memlane.cli.check as check
import memlane.cli.connections as connections
import memlane.cli.docs as docs
import memlane.cli.keys as keys
import memlane.cli.memories as memories
import memlane.cli.transfer as transfer
from memlane.cli.common import DATA_DIR_HELP, data_dir_option, org_option
from memlane.config import DEFAULT_PORT


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="memlane", description="Long-term memory and documentation recall.")
    p.add_argument("--data-dir", metavar="DIR", help=DATA_DIR_HELP)
    p.add_argument("--verbose", "-v", action="store_true",
                   help="also show the libraries' messages (model loading progress, INFO logs)")
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("serve", help="run the local server")
    s.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1: this machine only; 0.0.0.0 for every interface)")
    s.add_argument("--port", type=int, default=DEFAULT_PORT,
                   help=f"port to listen on (default {DEFAULT_PORT}; `make run PORT=…`)")
    data_dir_option(s)
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
    s.set_defaults(func=admin.cmd_serve)

    m = sub.add_parser("mcp", help="run the MCP server on stdio (MEMLANE_API_URL, or the data directory)")
    data_dir_option(m)
    org_option(m)
    m.set_defaults(func=admin.cmd_mcp)

    keys.add_parsers(sub)
    memories.add_parsers(sub)

    x = sub.add_parser("reindex", help="re-embed everything with the current embedder")
    data_dir_option(x)
    x.add_argument(
        "--aws",
        action="store_true",
        help="fill the deployed stack's search index (OpenSearch or S3 Vectors, as MEMLANE_SEARCH_KIND says) "
        "from DynamoDB, after switching searchBackend or the embedding model (AWS env vars as for doctor --aws)",
    )
    x.set_defaults(func=admin.cmd_reindex)

    f = sub.add_parser("forget", help="remove documents whose forget_after has passed")
    f.add_argument("--json", action="store_true", help="print the report as JSON")
    data_dir_option(f)
    f.set_defaults(func=admin.cmd_forget)

    d = sub.add_parser("doctor", help="compare the stores and report (or --repair) orphans and duplicate "
                                      "conversation messages")
    d.add_argument("--repair", action="store_true",
                   help="fix what is found: remove orphans and re-sent conversation copies, re-index what is "
                        "missing, make the data directory private")
    d.add_argument("--json", action="store_true", help="print the report as JSON")
    data_dir_option(d)
    d.add_argument(
        "--aws",
        action="store_true",
        help="check the deployed stack (AWS env vars: MEMLANE_TABLE, MEMLANE_BUCKET, …) instead",
    )
    d.set_defaults(func=admin.cmd_doctor)

    transfer.add_parsers(sub)
    docs.add_parsers(sub)
    connections.add_parsers(sub)
    check.add_parsers(sub)

    o = sub.add_parser("openapi", help="print the OpenAPI document")
    o.set_defaults(func=admin.cmd_openapi)
    iv = sub.add_parser("invoke", help="run a Lambda handler with an event file (needs AWS env vars)")
    iv.add_argument(
        "function",
        help="api, authorizer, admin_keys, ingest_consumer, extract … mark_failed, "
        "forget_job, refresh_job, page_worker",
    )
    iv.add_argument("event", help="event JSON file (events/…), or - for stdin")
    iv.set_defaults(func=admin.cmd_invoke)
    return p
