"""memlane's configuration: one model (memlane.config.model.Configuration) in parts, each read
once, where a host starts, and passed inward. Nothing below a host reads os.environ: a route, a
tool or a service takes what it needs from `Services.settings` or from an argument its host passes.

The parts, and who reads them:

- `Settings` (settings.py): every host — the CLI, `memlane serve`, `memlane mcp` and each Lambda
  function's composition — with the OAuth part (oauth.py) inside it;
- `LocalSettings`, `ConnectionApps` and `ClientSettings` (local.py, apps.py, client.py): a host on this
  machine; `LocalConfiguration` is all it reads, in memlane.cli.main;
- `DocsetSettings` (docsets.py): the hosts that crawl and rank documentation;
- `FunctionSettings` and `AwsSettings` (aws.py): each Lambda function, at import and at composition;
  the authorizer reads `OAuthVariables` alone.

How a variable is declared and read, and what a value memlane cannot use does (a ConfigurationError
naming the variable, when the host starts): memlane.config.variables. docs/configuration.md is
generated from the model: `python -m memlane.config.reference` (`make configuration-docs`).
"""

from memlane.config.settings import (
    DEFAULT_MCP_MAX_OUTPUT_CHARS,
    DEFAULT_PORT,
    MIN_MCP_OUTPUT_CHARS,
    ContextSides,
    Settings,
)

__all__ = ["DEFAULT_MCP_MAX_OUTPUT_CHARS", "DEFAULT_PORT", "MIN_MCP_OUTPUT_CHARS", "ContextSides", "Settings"]
