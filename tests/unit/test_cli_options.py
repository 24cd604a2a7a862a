"""Every subcommand's options, read from the parser itself (a command added later is checked too):
each option and argument says in `--help` what it is for, and every subcommand that works on a data
directory takes `--data-dir` (and, where it has an organization, `--org`) after its name as well as
before it."""

from __future__ import annotations

import argparse
from collections.abc import Iterator

import pytest

from memlane.cli import build_parser

# Commands that never open a data directory: the OpenAPI document, a Lambda handler, a deployed API.
NO_DATA_DIRECTORY = {("openapi",), ("invoke",), ("check",)}


def subcommands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> Iterator[
        tuple[tuple[str, ...], argparse.ArgumentParser, argparse._SubParsersAction | None]]:
    """Every parser of the tree with its command words, and its subparsers action (None for a leaf)."""
    sub = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
    yield path, parser, sub
    if sub is not None:
        for name, child in sub.choices.items():
            yield from subcommands(child, (*path, name))


def leaves() -> list[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    return [(path, parser) for path, parser, sub in subcommands(build_parser()) if sub is None]


def undescribed(parser: argparse.ArgumentParser, sub: argparse._SubParsersAction | None) -> list[str]:
    missing = [a.option_strings[0] if a.option_strings else a.dest for a in parser._actions
               if not isinstance(a, argparse._HelpAction | argparse._SubParsersAction)
               and (not a.help or a.help == argparse.SUPPRESS)]
    if sub is not None:  # each subcommand's one-line description in its parent's --help
        missing += [f"{c.dest} (command)" for c in sub._choices_actions if not c.help]
    return missing


def test_every_option_of_every_subcommand_has_a_help_description() -> None:
    missing = {" ".join(("memlane", *path)): names for path, parser, sub in subcommands(build_parser())
               if (names := undescribed(parser, sub))}
    assert missing == {}


def arguments_for(parser: argparse.ArgumentParser) -> list[str]:
    """Values for a leaf's required positional arguments."""
    return ["x" for a in parser._actions if not a.option_strings and a.required and a.nargs in (None, 1)]


@pytest.mark.parametrize("path, parser", [(p, s) for p, s in leaves() if p[:1] not in NO_DATA_DIRECTORY],
                         ids=[" ".join(p) for p, _ in leaves() if p[:1] not in NO_DATA_DIRECTORY])
def test_every_subcommand_on_a_data_directory_takes_data_dir_after_its_name(path, parser) -> None:
    argv = [*path, *arguments_for(parser)]
    after = build_parser().parse_args([*argv, "--data-dir", "/tmp/after"])
    before = build_parser().parse_args(["--data-dir", "/tmp/before", *argv])
    assert (after.data_dir, before.data_dir) == ("/tmp/after", "/tmp/before")


@pytest.mark.parametrize("path", [p for p, _ in leaves() if p[0] in ("docs", "connect", "connections", "remember",
                                                                   "recall", "export", "import", "mcp")],
                         ids=" ".join)
def test_subcommands_of_an_organization_take_org_after_their_name(path) -> None:
    parser = dict(leaves())[path]
    args = build_parser().parse_args([*path, *arguments_for(parser), "--org", "acme"])
    assert args.org == "acme"
