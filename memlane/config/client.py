"""The client part of the configuration: a memlane server (local or deployed) and a key for it.
With it, the CLI's `remember`, `recall`, `docs` and `check` and `memlane mcp` go through that
server's API instead of a data directory ([Command line](cli.md#where-a-command-works))."""

from __future__ import annotations

from memlane.config.variables import Section, SettingsPart, variable

ENV_API_URL = "MEMLANE_API_URL"
ENV_API_KEY = "MEMLANE_API_KEY"


class ClientSettings(SettingsPart):
    api_url: str | None = variable(
        ENV_API_URL, None, section=Section.WHERE, takes="a URL",
        doc="a memlane server (local or deployed): `remember`, `recall`, `docs`, `check` and `memlane mcp` "
            "then go through its API instead of a data directory")
    api_key: str | None = variable(ENV_API_KEY, None, section=Section.WHERE, takes="an API key",
                                   doc="the key `MEMLANE_API_URL`'s server is called with")
    # The memory spec's sample MCP configuration names them so; `memlane mcp` takes it unchanged.
    spec_api_url: str | None = variable(
        "MEMORY_API_URL", None, section=Section.WHERE, takes="a URL",
        doc="the memory spec's name for `MEMLANE_API_URL`, which `memlane mcp` accepts too")
    spec_api_key: str | None = variable(
        "MEMORY_API_KEY", None, section=Section.WHERE, takes="an API key",
        doc="the memory spec's name for `MEMLANE_API_KEY`, which `memlane mcp` accepts too")

    def mcp_server(self) -> tuple[str, str | None] | None:
        """The server `memlane mcp` goes through, and its key; None: the data directory."""
        url = self.api_url or self.spec_api_url
        return (url, self.api_key or self.spec_api_key) if url else None
