"""`memlane export` and `memlane import`: a project's documents as JSON lines, from and into a
local data directory or (--aws) a deployed stack."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Iterable

from memlane.cli.common import (
    CLI_USER,
    cli_principal,
    configuration_of,
    data_dir_option,
    err,
    existing_data_dir,
    local_runtime,
    no_data_dir,
    open_file_argument,
    org_option,
    plural,
    settings_of,
    works_on_data_directory,
)
from memlane.domain.models import Project
from memlane.domain.principal import Principal
from memlane.local.runtime import DEFAULT_ORG, org_name
from memlane.ports import Services

ORG_HELP = "organization (slug); default $MEMLANE_ORG, else the default organization"


def add_parsers(sub: argparse._SubParsersAction) -> None:
    e = sub.add_parser("export", help="write the documents (with versions) of one project, or of every project, "
                                      "as JSON lines (a backup `memlane import` restores)")
    e.add_argument("--project", "-p", help="only this project (default: every project of the organization; "
                                           "documentation sets are indexed again, not exported)")
    e.add_argument("--out", "-o", help="file (default stdout)")
    e.add_argument("--aws", action="store_true", help="read the deployed stack (AWS env vars) instead")
    org_option(e, help=ORG_HELP)
    data_dir_option(e)
    e.set_defaults(func=cmd_export)

    i = sub.add_parser("import", help="restore an export into a data directory or (--aws) a deployed stack")
    i.add_argument("file", help="a file `memlane export` wrote (JSON lines)")
    i.add_argument("--project", "-p", help="target project (default: the exported project's name)")
    i.add_argument("--aws", action="store_true", help="write to the deployed stack (AWS env vars)")
    org_option(i, help=ORG_HELP + " (created if new)")
    data_dir_option(i)
    i.set_defaults(func=cmd_import)


class Store:
    """The store an export reads or an import writes: a local data directory (the local runtime),
    or (--aws) the deployed stack's DynamoDB, S3 and OpenSearch, found through the same environment
    variables the Lambda functions read (MEMLANE_TABLE, MEMLANE_BUCKET, MEMLANE_SEARCH_ENDPOINT, …)."""

    services: Services
    who: Principal

    def __init__(self, args: argparse.Namespace) -> None:
        self._runtime = None
        if getattr(args, "aws", False):
            from memlane.adapters.aws.compose import build_aws_services
            from memlane.services.keys import ensure_organization

            self.services = build_aws_services(settings_of(args).model_copy(update={"inline_max_chars": 10**9}))
            org, _ = ensure_organization(self.services.metadata, org_name(args.org, configuration_of(args).local.org) or DEFAULT_ORG)
            self.who = Principal(organization_id=org.id, key_id=CLI_USER, user_id=CLI_USER)
        else:
            self._runtime = local_runtime(args)
            self.services, self.who = self._runtime.services, cli_principal(self._runtime, args)

    def close(self) -> None:
        if self._runtime is not None:
            self._runtime.close()


@works_on_data_directory("export", "unset MEMLANE_API_URL (or read a deployed stack with --aws)",
                         unless=lambda args: args.aws)
def cmd_export(args: argparse.Namespace) -> int:
    from memlane.domain.errors import MemlaneError
    from memlane.services.projects import find_project_by_name
    from memlane.services.transfer import export_organization, export_project

    if not args.aws and existing_data_dir(args) is None:
        return no_data_dir(args)
    store = Store(args)
    try:
        lines: Iterable[tuple[Project, str]]
        if args.project:
            project = find_project_by_name(store.services, store.who, args.project)
            lines = ((project, line) for line in export_project(store.services, store.who, project))
        else:
            lines = export_organization(store.services, store.who)
        counts: dict[str, int] = {}
        with contextlib.ExitStack() as stack:
            out = stack.enter_context(open_file_argument(args.out, "--out", "w")) if args.out else sys.stdout
            for project, line in lines:
                out.write(line + "\n")
                counts[project.name] = counts.get(project.name, -1) + 1  # the header line counts no document
        if args.project:
            print(f"exported {plural(counts[project.name], 'document')} from {project.name}", file=sys.stderr)
        else:
            print(f"exported {plural(sum(counts.values()), 'document')} from "
                  f"{plural(len(counts), 'project')}", file=sys.stderr)
    except MemlaneError as exc:
        return err(exc.message)
    finally:
        store.close()
    return 0


@works_on_data_directory("import", "unset MEMLANE_API_URL (or write to a deployed stack with --aws)",
                         unless=lambda args: args.aws)
def cmd_import(args: argparse.Namespace) -> int:
    from memlane.domain.errors import MemlaneError
    from memlane.services.transfer import import_lines

    with open_file_argument(args.file, "FILE") as source:  # before the data directory is opened (or made)
        store = Store(args)
        try:
            result = import_lines(store.services, store.who, source, project_name=args.project)
        except MemlaneError as exc:
            return err(exc.message)
        except UnicodeDecodeError:
            return err(f"{args.file} is not UTF-8 text: `memlane import` reads what `memlane export` wrote", 2)
        finally:
            store.close()
    print(json.dumps(result))
    return 0
