"""`memlane connect git` and `memlane connections`: sources synced into memory, on the local data
directory (the API offers the same for a remote server)."""

from __future__ import annotations

import argparse
import json
import sys

from memlane.cli.common import (
    LocalClient,
    cli_principal,
    data_dir_option,
    err,
    local_runtime,
    org_option,
    plural,
    remote_url,
    reports_errors,
)

ORG_HELP = "organization (slug); default $MEMLANE_ORG, else the default organization"


def add_parsers(sub: argparse._SubParsersAction) -> None:
    cn = sub.add_parser("connect", help="connect a source to sync into memory (git: a local clone)")
    cns = cn.add_subparsers(dest="source", required=True)
    cg = cns.add_parser("git", help="sync a local git clone's committed files (no network)")
    cg.add_argument("path", help="the clone's folder on this machine")
    cg.add_argument("--project", "-p", help="target project (created if new; default: the default project)")
    cg.add_argument("--repo-id", help="raged repoId (default: the clone's folder name)")
    cg.add_argument("--branch", help="branch or commit to sync (default: HEAD)")
    cg.add_argument("--no-sync", action="store_true", help="only create the connection; `memlane serve` syncs it")
    data_dir_option(cn, cg)
    org_option(cn, cg, help=ORG_HELP)
    cn.set_defaults(func=cmd_connect)

    cl = sub.add_parser("connections", help="list, sync or delete connections (local data directory)")
    cls = cl.add_subparsers(dest="connections_cmd", required=True)
    cll = cls.add_parser("list", help="list connections with their last sync")
    csy = cls.add_parser("sync", help="sync one connection now")
    csy.add_argument("connection_id", help="the connection's id, as `memlane connections list` shows it")
    cdl = cls.add_parser("delete", help="delete a connection")
    cdl.add_argument("connection_id", help="the connection's id, as `memlane connections list` shows it")
    cdl.add_argument("--remove-documents", action="store_true", help="also remove what it brought in")
    data_dir_option(cl, cll, csy, cdl)
    org_option(cl, cll, csy, cdl, help=ORG_HELP)
    cl.set_defaults(func=cmd_connections)


@reports_errors
def cmd_connect(args: argparse.Namespace) -> int:
    """`memlane connect git PATH`: sync a local clone's committed files into a project, now and
    then every 15 minutes while `memlane serve` runs on the same data directory."""
    if remote_url(args):
        return err("git connections read a clone on this machine: run without MEMLANE_API_URL, "
                   "against the data directory of the server on this machine (--data-dir)")
    from memlane.connections.service import connect_git, connection_out
    from memlane.connections.sync import sync_connection

    runtime = local_runtime(args)
    try:
        svc, who = runtime.services, cli_principal(runtime, args)
        project_id = LocalClient(runtime, who).project_id(args.project) if args.project else None
        conn = connect_git(svc, who, args.path, project_id=project_id, repo_id=args.repo_id, branch=args.branch)
        print(f"connection {conn.id}: {conn.name}", file=sys.stderr)
        if not args.no_sync:
            result = sync_connection(svc, conn.organization_id, conn.id)
            runtime.drain()  # anything the write path queued
            if result is None:
                print("a sync of this connection is running elsewhere (memlane serve); it will pick it up",
                      file=sys.stderr)
            else:
                print(f"synced: {result.added} added, {result.updated} updated, {result.deleted} deleted, "
                      f"{plural(len(result.errors), 'error')}", file=sys.stderr)
                for error in result.errors:
                    print(f"  {error}", file=sys.stderr)
        ports = svc.connections
        current = ports.store.get_connection(conn.organization_id, conn.id) if ports else None
        print(json.dumps(connection_out(current or conn).model_dump(mode="json")))
    finally:
        runtime.close()
    return 0


@reports_errors
def cmd_connections(args: argparse.Namespace) -> int:
    """List, sync or delete the data directory's connections (the API offers the same remotely)."""
    if remote_url(args):
        return err("`memlane connections` works on the local data directory; unset MEMLANE_API_URL, or use "
                   "the API for a server: GET /v3/connections, POST /v3/connections/{id}/sync, "
                   "DELETE /v3/connections/{id}", 2)
    from memlane.connections import service
    from memlane.connections.sync import sync_connection

    runtime = local_runtime(args)
    try:
        svc, who = runtime.services, cli_principal(runtime, args)
        if args.connections_cmd == "list":
            for conn in service.list_connections(svc, who).connections:
                last = conn.last_result
                print(f"{conn.id}  {conn.status.value:<11} {conn.name}"
                      + (f"  last sync {conn.last_synced_at:%Y-%m-%d %H:%M} (+{last.added} ~{last.updated} "
                         f"-{last.deleted}, {plural(len(last.errors), 'error')})" if last and conn.last_synced_at else ""))
        elif args.connections_cmd == "sync":
            conn = service.get_connection(svc, who, args.connection_id)
            result = sync_connection(svc, who.organization_id, conn.id)
            runtime.drain()
            print(json.dumps(result.model_dump(mode="json") if result else {"running": "elsewhere, or not active"}))
        elif args.connections_cmd == "delete":
            out, _ = service.delete_connection(svc, who, args.connection_id, args.remove_documents)
            print(json.dumps(out.model_dump(mode="json")))
    finally:
        runtime.close()
    return 0
