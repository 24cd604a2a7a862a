"""`memlane mcp`: the MCP server on stdio, over a memlane server (MEMLANE_API_URL) or over the
data directory in this process, on the local runtime (the rate limit, background work and
organization rule of `memlane serve` and the CLI)."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from pathlib import Path

import anyio

from memlane.config import Settings
from memlane.local.runtime import LocalRuntime, org_name
from memlane.mcp.backend import Backend
from memlane.mcp.remote import HttpBackend
from memlane.mcp.server import serve_stdio

log = logging.getLogger(__name__)

ENV_ALLOW_PRIVATE_NETWORK = "MEMLANE_ALLOW_PRIVATE_NETWORK"


def local_backend(settings: Settings, org: str | None = None, *, embedder: object = None,
                  docsets: bool | None = None, allow_private_network: bool = False) -> Backend:
    """The data directory, opened in this process with its background work running (saves too
    large for the request, documentation crawls, connection syncs, the forget sweep), as the
    organization of the one rule (memlane.local.runtime). The search index loads in the background
    from the start, as in `memlane serve`. Closing the backend stops it all."""
    runtime = LocalRuntime(settings, embedder=embedder, docsets=docsets, allow_private_network=allow_private_network)
    try:
        principal = runtime.principal(org, user_id="mcp")
        runtime.start()
        # long-lived like `memlane serve`: the index loaded now, beside the handshake, and graphs
        # never built for this directory built in the background while searches stay exact
        runtime.stack.index.warm_in_background()
    except BaseException:
        runtime.close()
        raise
    return runtime.mcp_backend(principal)


def backend_from_env(data_dir: Path | None = None, env: Mapping[str, str] | None = None,
                     org: str | None = None, settings: Settings | None = None) -> Backend:
    """MEMLANE_API_URL (with MEMLANE_API_KEY) selects a server; without it, the data directory
    (`--data-dir`, MEMLANE_DATA_DIR or ~/.memlane) as `--org`/MEMLANE_ORG or the default
    organization. The spec's MEMORY_API_URL/MEMORY_API_KEY are accepted too, so its sample
    configuration works unchanged."""
    env = dict(os.environ if env is None else env)
    url = env.get("MEMLANE_API_URL") or env.get("MEMORY_API_URL")
    if url:
        return HttpBackend(url, env.get("MEMLANE_API_KEY") or env.get("MEMORY_API_KEY"))
    settings = settings or Settings.from_env(env, data_dir=data_dir)
    return local_backend(settings, org_name(org, env),
                         allow_private_network=env.get(ENV_ALLOW_PRIVATE_NETWORK) == "1")  # as `memlane serve`


def run_stdio(data_dir: Path | None = None, org: str | None = None) -> int:
    """`memlane mcp`: serve until the client closes stdin."""
    settings = Settings.from_env(data_dir=data_dir)  # once, here: the tools never read the environment
    backend = backend_from_env(data_dir, org=org, settings=settings)
    log.info("memlane MCP server using the %s", backend.description)
    try:
        anyio.run(serve_stdio, backend, settings.mcp_max_output_chars)
    finally:
        backend.close()
    return 0
