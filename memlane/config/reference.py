"""docs/configuration.md, written from the configuration model (memlane.config.model): every
variable a part declares, by section, with what it takes, its default and what it means. The page
is never edited by hand; a test fails when the committed one differs from what this writes.

    python -m memlane.config.reference            # write docs/configuration.md
    python -m memlane.config.reference --check    # exit 1 if the committed page is stale

(`make configuration-docs` runs the first.)
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from memlane.config.model import Configuration
from memlane.config.variables import Section, SettingsPart, about, nested_part, takes, variables_of

PAGE = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"
COMMAND = "python -m memlane.config.reference"

INTRODUCTION = """\
memlane is configured by environment variables, and needs none to start: every variable below has a
default that works on a laptop. Each is read once, when the server, `memlane mcp`, a CLI command or
a Lambda function starts (the configuration model, `memlane.config`), never during a request: a
change takes effect at the next start (on AWS, the next cold start). An empty value counts as unset.
A value memlane cannot use stops it there with a message naming the variable and what it takes:

```text
memlane: MEMLANE_MCP_MAX_OUTPUT_CHARS='10': expected a whole number of characters, at least 1000
```

A switch takes `1`, `true`, `yes` or `on`, and `0`, `false`, `no` or `off` (any case); anything
else is refused the same way.

A deployed stack is configured with CDK context instead (`-c key=value`), which sets the functions'
variables for you: see [Deploy](deploy.md#2-configure). `make run` takes `HOST` and `PORT`
(`make run PORT=8000`; defaults `127.0.0.1` and `7432`)."""

# Prose a section's table does not say, before (intro) or after (outro) it.
INTROS = {
    Section.RANKING: "What these change is explained in [How recall ranks](concepts.md).",
    Section.CONNECTIONS: "The OAuth app registered with each provider "
                         "([Connections](connections.md#setting-up-the-providers)), on a server on your machine.",
    Section.STACK: "The CDK stack sets these on the Lambda functions; you change them through CDK context, not by "
                   "hand (except `MEMLANE_RERANK_WEIGHT`, which has no context key).",
}
OUTROS = {
    Section.MODELS: "A data directory remembers which embedder built its index and refuses vectors from another: "
                    "switching needs `memlane reindex` or a new `--data-dir`.",
    Section.CONNECTIONS: "On AWS the OAuth clients live in one Secrets Manager secret instead "
                         "([Deploy](deploy.md#connections)).",
}
# Set by the stack for Powertools and the Lambda runtime, which read them; memlane's code does not.
STACK_FOR_OTHERS = (
    ("`POWERTOOLS_SERVICE_NAME`, `LOG_LEVEL`", "Powertools' service name and log level"),
)
DEVELOPMENT = """\
## For development

Read by the tests, the benchmarks and the examples, not by memlane itself.

| variable | meaning |
| --- | --- |
| `MEMLANE_URL` | the server the [client examples](clients.md) talk to, with `MEMLANE_API_KEY` |
| `MEMLANE_SCREENSHOTS` | the end-to-end tests write the documentation's pictures (`make screenshots`) |
| `MEMLANE_EVAL_EMBED_CACHE` | where `make eval` caches embeddings (default `bench/.cache`) |"""


@dataclass(frozen=True)
class Row:
    section: Section
    variables: str
    takes: str
    default: str
    meaning: str


def _code(names: tuple[str, ...] | list[str]) -> str:
    return ", ".join(f"`{n}`" for n in names)


def _default(info: FieldInfo) -> str:
    shown = about(info, "shown")
    if shown is not None:
        return shown
    value: Any = info.default
    if value is PydanticUndefined and info.default_factory is None:
        return "required"
    if value is None or value == "" or value == frozenset():
        return "unset"
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, Enum):
        value = value.value
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return f"`{value}`"


def _rows(part: type[SettingsPart], seen: set[str]) -> Iterator[Row]:
    """A part's variables not written yet (a part that another extends repeats its parent's)."""
    for name, info in part.model_fields.items():
        names = variables_of(part, name)
        if not names or names[0] in seen:
            continue
        seen.update(names)
        flag = about(info, "flag")
        shown = _code(names) + (f" / `{flag}`" if flag else "")
        yield Row(Section(str(about(info, "section"))), shown, takes(info), _default(info), str(info.description))


def _family(part: type[SettingsPart], seen: set[str]) -> Row:
    """One row for a family of variables (a part with an env_prefix): every name, the part's doc."""
    names = [n for field in part.model_fields for n in variables_of(part, field)]
    seen.update(names)
    section = Section(str(about(next(iter(part.model_fields.values())), "section")))
    return Row(section, _code(names), "text", "unset", f"{(part.__doc__ or '').strip()} app")


def _parts(model: type[Any]) -> Iterator[type[SettingsPart]]:
    """Every part of the model, depth first, in the order its fields name them."""
    for info in model.model_fields.values():
        part = nested_part(info)
        if part is not None:
            yield part
            yield from _parts(part)


def rows() -> list[Row]:
    seen: set[str] = set()
    out: list[Row] = []
    for part in dict.fromkeys(_parts(Configuration)):
        if part.model_config.get("env_prefix"):
            out.append(_family(part, seen))
        elif not any(nested_part(info) for info in part.model_fields.values()):
            out.extend(_rows(part, seen))
    return out


def _family_fields() -> list[str]:
    """What each name of a family ends with, and what it is (the connection providers' apps)."""
    from memlane.config.apps import ProviderApp

    lines = ["Each provider's variables end the same way:", "", "| ending | meaning |", "| --- | --- |"]
    for name, info in ProviderApp.model_fields.items():
        lines.append(f"| `_{name.upper()}` | {info.description} |")
    return lines


def _table(section: Section, found: list[Row]) -> list[str]:
    lines = ["| variable | takes | default | meaning |", "| --- | --- | --- | --- |"]
    lines += [f"| {r.variables} | {r.takes} | {r.default} | {r.meaning} |" for r in found]
    if section is Section.STACK:
        lines += [f"| {names} | text | set by the stack | {meaning} |" for names, meaning in STACK_FOR_OTHERS]
    return lines


def page() -> str:
    """docs/configuration.md as the model says it."""
    lines = [f"<!-- Written by `{COMMAND}` from the configuration model (memlane.config): "
             "change the model, then run it (`make configuration-docs`). -->", "", "# Configuration", "",
             INTRODUCTION]
    every = rows()
    for section in Section:
        found = [r for r in every if r.section is section]
        lines += ["", f"## {section.value}", ""]
        if section in INTROS:
            lines += [INTROS[section], ""]
        lines += _table(section, found)
        if section is Section.CONNECTIONS:
            lines += ["", *_family_fields()]
        if section in OUTROS:
            lines += ["", OUTROS[section]]
    lines += ["", DEVELOPMENT]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=COMMAND, description="Write docs/configuration.md from the model.")
    parser.add_argument("--check", action="store_true", help="exit 1 if the committed page differs, change nothing")
    args = parser.parse_args(argv)
    written = page()
    if args.check:
        if PAGE.read_text(encoding="utf-8") != written:
            print(f"{PAGE} is stale: run `{COMMAND}` (make configuration-docs)", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(written, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
