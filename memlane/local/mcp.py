"""`memlane mcp`: the MCP server on stdio, over a memlane server (MEMLANE_API_URL) or over the
data directory in this process, on the local runtime (the rate limit, background work and
organization rule of `memlane serve` and the CLI)."""

from __future__ import annotations

import logging

import anyio

from memlane.config import Settings
from memlane.config.local import LocalConfiguration
from memlane.local.runtime import LocalRuntime, org_name
from memlane.mcp.backend import Backend
from memlane.mcp.remote import HttpBackend
from memlane.mcp.server import serve_stdio

log = logging.getLogger(__name__)

def local_backend(settings: Settings, org: str | None = None, *, embedder: object = None,
                  docsets: bool | None = None, allow_private_network: bool = False,
                  configuration: LocalConfiguration | None = None) -> Backend:
    """The data directory, opened in this process with its background work running (saves too
    large for the request, documentation crawls, connection syncs, the forget sweep), as the
    organization of the one rule (memlane.local.runtime). The search index loads in the background
    from the start, as in `memlane serve`. Closing the backend stops it all."""
    parts = configuration or LocalConfiguration()
    runtime = LocalRuntime(settings, embedder=embedder, docsets=docsets, allow_private_network=allow_private_network,
                           docset_settings=parts.docsets, local=parts.local, apps=parts.apps)
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


def backend_from(configuration: LocalConfiguration, org: str | None = None) -> Backend:
    """MEMLANE_API_URL (with MEMLANE_API_KEY) selects a server; without it, the data directory
    (`--data-dir`, MEMLANE_DATA_DIR or ~/.memlane) as `--org`/MEMLANE_ORG or the default
    organization. The spec's MEMORY_API_URL/MEMORY_API_KEY are accepted too, so its sample
    configuration works unchanged (memlane.config.client)."""
    server = configuration.client.mcp_server()
    if server is not None:
        return HttpBackend(*server)
    local = configuration.local
    return local_backend(configuration.settings, org_name(org, local.org), configuration=configuration,
                         allow_private_network=local.allow_private_network)  # as `memlane serve`


def run_stdio(configuration: LocalConfiguration, org: str | None = None) -> int:
    """`memlane mcp`: serve until the client closes stdin, with the configuration `memlane` read
    when it started (the tools never read the environment)."""
    backend = backend_from(configuration, org=org)
    log.info("memlane MCP server using the %s", backend.description)
    try:
        anyio.run(serve_stdio, backend, configuration.settings.mcp_max_output_chars)
    finally:
        backend.close()
    return 0
