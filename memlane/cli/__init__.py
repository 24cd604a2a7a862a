"""`memlane`: serve, mcp, keys, remember, recall, reindex, forget, doctor, export, import,
connect, connections, openapi, invoke, check.

`remember` and `recall` work against a remote API when MEMLANE_API_URL is set (with
MEMLANE_API_KEY), otherwise against the local data directory through the local runtime
(memlane.local.runtime): the same resolver, rate limit and idempotency as `memlane serve`.

One module per command group: memories (remember, recall), keys, admin (serve, mcp, reindex,
forget, doctor, openapi, invoke), transfer (export, import), connections, check (a deployed
API end to end); parser puts them together; common holds the client a command talks to.
"""

from __future__ import annotations

from memlane.cli.common import err
from memlane.cli.parser import build_parser
from memlane.domain.errors import ConfigurationError

__all__ = ["build_parser", "main"]


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args) or 0
    except ConfigurationError as exc:  # a setting memlane cannot use, named, before anything ran
        return err(exc.message, 2)
