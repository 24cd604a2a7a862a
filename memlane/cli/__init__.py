"""`memlane`: serve, mcp, keys, remember, recall, docs, reindex, forget, doctor, export, import,
connect, connections, openapi, invoke, check.

`remember`, `recall` and `docs` work against a remote API when MEMLANE_API_URL is set (with
MEMLANE_API_KEY), otherwise against the local data directory through the local runtime
(memlane.local.runtime): the same resolver, rate limit and idempotency as `memlane serve`.
Commands that work on the data directory itself (keys, reindex, forget, doctor, export, import)
say so and refuse when MEMLANE_API_URL names a server.

One module per command group: memories (remember, recall), docs, keys, admin (serve, mcp, reindex,
forget, doctor, openapi, invoke), transfer (export, import), connections, check (a deployed API end to end); parser puts them
together; common holds the client a command talks to; quiet keeps libraries' chatter out of sight
unless --verbose.
"""

from __future__ import annotations

import os
import sys

from memlane.cli.common import FileArgumentError, err
from memlane.cli.parser import build_parser
from memlane.config.local import LocalConfiguration
from memlane.domain.errors import ConfigurationError, DamagedStoreError

__all__ = ["build_parser", "main"]

SIGPIPE_EXIT = 141  # 128 + SIGPIPE, what a shell reports for a reader that went away


def main(argv: list[str] | None = None) -> int:
    from memlane_client import MemlaneUnreachable

    from memlane.cli.quiet import quiet_third_party

    args = build_parser().parse_args(argv)
    quiet_third_party(getattr(args, "verbose", False))
    try:
        # the one read of the environment: every command, `memlane serve` and `memlane mcp` take
        # their settings from it (memlane.cli.common.configuration_of)
        args.configuration = LocalConfiguration.from_env()
        code = args.func(args) or 0
        sys.stdout.flush()  # a closed pipe shows here, not at interpreter exit
        return code
    except MemlaneUnreachable as exc:  # a command that does not report errors itself
        return err(exc.error)
    except BrokenPipeError:
        # `memlane recall --json … | head -1`: the reader has what it wanted. Nothing more is
        # written, and the exit flush must not fail either.
        _stdout_to_devnull()
        return SIGPIPE_EXIT
    except ConfigurationError as exc:  # a setting memlane cannot use, named, before anything ran
        return err(exc.message, 2)
    except FileArgumentError as exc:  # `--file missing.md`: one line, not a traceback
        return err(str(exc), 2)
    except DamagedStoreError as exc:  # the data directory's database, and how to recover it
        return err(exc.message, 2)


def _stdout_to_devnull() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout is not a file (captured in tests)
        pass
