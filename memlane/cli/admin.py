"""Running and looking after memlane: serve, mcp, reindex, forget, doctor, openapi, invoke."""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import sys
from pathlib import Path
from typing import cast

from memlane.cli.common import (
    configuration_of,
    err,
    existing_data_dir,
    local_runtime,
    no_data_dir,
    plural,
    read_file_argument,
    settings_of,
    works_on_data_directory,
)
from memlane.cli.quiet import quiet_handlers

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def cmd_serve(args: argparse.Namespace) -> int:
    from memlane.domain.errors import ConfigurationError, InvalidInputError
    from memlane.domain.origins import parse_origins
    from memlane.local.server import LocalServer, claim_port, refuse_no_auth_off_loopback

    # Everything that can refuse the command is checked before the first line is printed.
    try:
        settings = settings_of(args)
        # --allow-origin, and MEMLANE_ALLOWED_ORIGINS (read with the other settings)
        origins = parse_origins(args.allow_origin or []) | settings.allowed_origins
        refuse_no_auth_off_loopback(args.host, args.no_auth)
        sock = claim_port(args.host, args.port)
    except (ConfigurationError, InvalidInputError) as exc:
        return err(exc.message, 2)
    logging.basicConfig(level=logging.INFO, format=LOG_FORMAT)
    quiet_handlers(getattr(args, "verbose", False))
    print(f"memlane: data directory {settings.data_dir}", flush=True)
    parts = configuration_of(args)
    allow_private = args.allow_private_network or parts.local.allow_private_network
    server = LocalServer(
        settings,
        host=args.host,
        port=args.port,
        no_auth=args.no_auth,
        allow_all_origins=args.allow_all_origins,
        allow_private_network=allow_private,
        allowed_origins=origins,
        docset_settings=parts.docsets,
        local=parts.local,
        apps=parts.apps,
    )
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
    server.serve_forever(sock)
    return 0


def cmd_mcp(args: argparse.Namespace) -> int:
    """stdio MCP server. Nothing but the protocol may reach stdout, so logs go to stderr."""
    from memlane.local.mcp import run_stdio

    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format=LOG_FORMAT)
    quiet_handlers(getattr(args, "verbose", False))
    return run_stdio(configuration_of(args), org=getattr(args, "org", None))


@works_on_data_directory("reindex", "unset MEMLANE_API_URL (or fill a deployed stack's index with --aws)",
                         unless=lambda args: args.aws)
def cmd_reindex(args: argparse.Namespace) -> int:
    """Write every document again with the current embedder (after switching models)."""
    from memlane.local import index_rules
    from memlane.local.reindex import requeue_everything

    if args.aws:
        return _reindex_aws(args)
    if existing_data_dir(args) is None:
        return no_data_dir(args)
    runtime = local_runtime(args)
    stack, svc, worker = runtime.stack, runtime.services, runtime.worker
    try:
        total = requeue_everything(svc, stack.metadata, stack.index, stack.queue)
        while worker.run_once():
            print(f"\rre-embedded {worker.processed} of {plural(total, 'document')}", end="", file=sys.stderr, flush=True)
        left = stack.queue.pending_count()
        if not left:  # every entry written again: the index follows every current rule
            index_rules.mark_current(stack.db)
        print(f"\nreindexed {plural(worker.processed, 'document')} with {svc.embedder.id}"
              + (f"; {left} are queued for a retry (see their status)" if left else ""))
    finally:
        runtime.close()
    return 0


def _reindex_aws(args: argparse.Namespace) -> int:
    """Every ready document of the stack's DynamoDB table written into its search index again."""
    from memlane.adapters.aws.compose import aws_settings, build_aws_services
    from memlane.adapters.aws.doctor import AwsInventory
    from memlane.services.reindex import reindex

    services = build_aws_services(settings_of(args))
    target = aws_settings().vector_bucket or aws_settings().search_endpoint
    print(f"filling the {services.index.backend} index ({target}) with {services.embedder.id}", file=sys.stderr)
    report = reindex(services, AwsInventory(services),
                     progress=lambda done, total: print(f"\rwritten {done} of {plural(total, 'document')}", end="",
                                                        file=sys.stderr, flush=True))
    counts = report.as_dict()
    print("\n" + ", ".join(f"{name} {value}" for name, value in counts.items()))
    if report.deferred or report.failed:
        print("deferred documents are retried by the stack's ingest consumer; failed ones say why in their status "
              "(GET /v3/documents/{id}); run `memlane reindex --aws` again to retry them all", file=sys.stderr)
    return 1 if report.failed else 0


@works_on_data_directory("forget")
def cmd_forget(args: argparse.Namespace) -> int:
    """Run the auto-forget sweep now (the server runs it hourly)."""
    from memlane.documents.forget import forget_expired

    if existing_data_dir(args) is None:
        return no_data_dir(args)
    runtime = local_runtime(args)
    try:
        report = forget_expired(runtime.services)
    finally:
        runtime.close()
    print(json.dumps(report.as_dict()) if args.json
          else f"forgot {plural(report.forgotten, 'expired document')}")
    return 0


@works_on_data_directory("doctor", "unset MEMLANE_API_URL (or check a deployed stack with --aws)",
                         unless=lambda args: args.aws)
def cmd_doctor(args: argparse.Namespace) -> int:
    if not args.aws and existing_data_dir(args) is None:
        return no_data_dir(args)
    if args.aws:
        from memlane.adapters.aws.compose import build_aws_services
        from memlane.adapters.aws.doctor import AwsInventory
        from memlane.services.doctor import examine as examine_services

        services = build_aws_services(settings_of(args))
        report = examine_services(services, AwsInventory(services), repair=args.repair)
    else:
        from memlane.local.doctor import examine

        runtime = local_runtime(args)
        try:
            report = examine(runtime.stack, repair=args.repair)
        finally:
            runtime.close()
    summary = report.as_dict()
    if args.json:
        print(json.dumps(summary))
    else:
        for name, value in summary.items():
            print(f"{name:>20}: {value}")
    return 0 if report.total == 0 or report.repaired else 1


def cmd_openapi(args: argparse.Namespace) -> int:
    from memlane.api.app import MemlaneApi
    from memlane.ports import Services

    # The document describes the routes; no request runs, so no services are composed.
    print(json.dumps(MemlaneApi(lambda: cast(Services, None)).openapi(), indent=2))
    return 0


def cmd_invoke(args: argparse.Namespace) -> int:
    """Run a Lambda entry point here with a sample event, against whatever AWS the environment
    points at (credentials, AWS_REGION and the stack's MEMLANE_* variables)."""
    root = Path(__file__).resolve().parents[2]  # functions/ sits beside memlane/ in a checkout
    for path in (str(Path.cwd()), str(root)):
        if path not in sys.path:
            sys.path.insert(0, path)
    try:
        from functions.invoke import invoke
    except ModuleNotFoundError:
        return err("functions/ not found: run `memlane invoke` from a memlane checkout")
    raw = sys.stdin.buffer.read() if args.event == "-" else read_file_argument(args.event, "EVENT")
    try:
        event = json.loads(raw)
    except ValueError as exc:
        return err(f"the event is not JSON ({exc})", 2)
    # A handler prints its logs and metrics (CloudWatch EMF lines) to stdout, as Lambda expects;
    # here stdout carries only the result, so `memlane invoke ... | jq` works.
    with contextlib.redirect_stdout(sys.stderr):
        result = invoke(args.function, event)
    print(json.dumps(result, indent=2, default=str))
    return 0
