"""What every command shares: settings from the command line, the one-line error report, and the
client a command talks to (a remote API, or the local runtime in process)."""

from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO, cast

from memlane_client import MemlaneClient, MemlaneError
from memlane_client.errors import error_for, error_text
from pydantic import ValidationError

from memlane.config import Settings
from memlane.config.local import LocalConfiguration
from memlane.domain.principal import Principal
from memlane.local.runtime import LocalRuntime, org_name

CLI_USER = "cli"

Command = Callable[[argparse.Namespace], int]

DATA_DIR_HELP = "data directory (default $MEMLANE_DATA_DIR, else ~/.memlane)"
ORG_HELP = "organization (slug) of the data directory; default $MEMLANE_ORG, else the default organization"


def data_dir_option(*parsers: argparse.ArgumentParser) -> None:
    """`--data-dir` after a subcommand's name as well as before it (`memlane docs index URL --data-dir X`):
    left out of the namespace unless given here, so the one given before the name stays."""
    for parser in parsers:
        parser.add_argument("--data-dir", dest="data_dir", default=argparse.SUPPRESS, metavar="DIR", help=DATA_DIR_HELP)


def org_option(first: argparse.ArgumentParser, *subcommands: argparse.ArgumentParser,
               help: str = ORG_HELP) -> None:  # noqa: A002 - argparse's word
    """`--org` on a command (or a command group) and on each of its subcommands; given after a
    subcommand's name, it wins."""
    first.add_argument("--org", help=help)
    for parser in subcommands:
        parser.add_argument("--org", default=argparse.SUPPRESS, help=help)


def configuration_of(args: argparse.Namespace) -> LocalConfiguration:
    """What `main` read from the environment when the command started (memlane.config.local), with
    `--data-dir` winning over MEMLANE_DATA_DIR."""
    given = getattr(args, "data_dir", None)
    return args.configuration.with_data_dir(Path(given).expanduser() if given else None)


def settings_of(args: argparse.Namespace) -> Settings:
    return configuration_of(args).settings


class FileArgumentError(Exception):
    """A file named on the command line that cannot be read or written: `main` reports it in one
    line and exits 2, before anything else happened."""


def _why(exc: OSError) -> str:
    return (exc.strerror or str(exc)).lower()


def read_file_argument(path: str, option: str) -> bytes:
    try:
        return Path(path).expanduser().read_bytes()
    except OSError as exc:
        raise FileArgumentError(f"cannot read {path} ({option}): {_why(exc)}") from exc


def open_file_argument(path: str, option: str, mode: str = "r") -> TextIO:
    """A text file named on the command line, opened for reading (`r`) or writing (`w`), UTF-8."""
    try:
        return cast(TextIO, open(Path(path).expanduser(), mode, encoding="utf-8"))  # noqa: SIM115 - the caller closes it
    except OSError as exc:
        verb = "write" if "w" in mode else "read"
        raise FileArgumentError(f"cannot {verb} {path} ({option}): {_why(exc)}") from exc


def plural(count: int, noun: str, plural_form: str | None = None) -> str:
    """`1 chunk`, `2 chunks`, `0 chunks`."""
    return f"{count} {noun if count == 1 else plural_form or noun + 's'}"


def err(message: str, code: int = 1) -> int:
    print(f"memlane: {message}", file=sys.stderr)
    return code


def reports_errors(command: Command) -> Command:
    """A client's mistake (invalid input, not found, …) is a one-line message and exit code 1,
    the same for a local data directory and a remote API: the API's own `error` text."""

    @functools.wraps(command)
    def run(args: argparse.Namespace) -> int:
        from memlane.domain.errors import MemlaneError as DomainError

        try:
            return command(args)
        except MemlaneError as exc:
            return err(exc.error)
        except ValidationError as exc:
            from memlane.api.errors import describe_validation_errors

            return err(describe_validation_errors(cast(Any, exc.errors())))
        except DomainError as exc:
            return err(exc.message)

    return run


WEB_APP_HINT = "unset MEMLANE_API_URL or use the web app"


def works_on_data_directory(name: str, hint: str = "unset MEMLANE_API_URL",
                            unless: Callable[[argparse.Namespace], bool] = lambda args: False) -> Callable[[Command], Command]:
    """A command that reads or writes the local data directory itself: with MEMLANE_API_URL set
    (the user means a server), it says so and exits 2 instead of answering about a data
    directory the user did not mean (`unless`: the command was pointed elsewhere, e.g. --aws)."""

    def wrap(command: Command) -> Command:
        @functools.wraps(command)
        def run(args: argparse.Namespace) -> int:
            if remote_url(args) and not unless(args):
                return err(f"`memlane {name}` works on the local data directory; {hint}", 2)
            return command(args)

        return run

    return wrap


def existing_data_dir(args: argparse.Namespace) -> Path | None:
    """The data directory when it holds memlane's database, else None: a command that only reads
    must not leave an empty data directory behind."""
    from memlane.local.compose import DB_FILE

    data_dir = settings_of(args).data_dir
    return data_dir if (data_dir / DB_FILE).is_file() else None


def no_data_dir(args: argparse.Namespace) -> int:
    where = settings_of(args).data_dir
    return err(f"no memlane data directory at {where} (nothing saved yet; --data-dir or MEMLANE_DATA_DIR names "
               "another)")


class NoEmbedder:
    """Key management never embeds; avoid loading the model for it."""

    id = "none"
    dimension = 384

    def embed_documents(self, texts):  # pragma: no cover - never called
        raise RuntimeError("no embedder in this command")

    def embed_query(self, text):  # pragma: no cover - never called
        raise RuntimeError("no embedder in this command")


def local_runtime(args: argparse.Namespace, **options: Any) -> LocalRuntime:
    """The local runtime over the data directory, for one command (nothing runs in the
    background: a command that queues work calls `drain()`)."""
    parts = configuration_of(args)
    options = {"docsets": False, "docset_settings": parts.docsets, "local": parts.local, "apps": parts.apps,
               **options}
    runtime = LocalRuntime(parts.settings, **options)
    # a search that must first build the vector index (the first after an upgrade: minutes at a
    # million chunks) says so, rather than seeming to hang
    runtime.stack.index.notice = lambda message: print(f"memlane: {message}", file=sys.stderr, flush=True)
    return runtime


def cli_principal(runtime: LocalRuntime, args: argparse.Namespace) -> Principal:
    """The one organization rule (memlane.local.runtime): --org, else MEMLANE_ORG, else the
    default organization (that of `make run`'s key)."""
    return runtime.principal(org_name(getattr(args, "org", None), configuration_of(args).local.org), user_id=CLI_USER)


class LocalClient(MemlaneClient):
    """The API client's methods answered by the local runtime in process, as `principal`: the
    same routes, validation, idempotency and rate limit as `memlane serve`. Closing it closes
    the runtime."""

    def __init__(self, runtime: LocalRuntime, principal: Principal) -> None:  # no socket: no super()
        self.runtime = runtime
        self.principal = principal
        self.base_url = f"memlane data directory {runtime.settings.data_dir}"
        self.api_key = None
        self._routes = None

    def request(self, method: str, path: str, json: Any = None, params: dict[str, Any] | None = None,
                headers: dict[str, str] | None = None) -> Any:
        status, body = self.runtime.request(self.principal, method, path, json, params, headers)
        if status >= 400:
            raise error_for(status, error_text(status, body, body if isinstance(body, str) else ""), body)
        return body if body is not None else {}

    def close(self) -> None:
        self.runtime.close()


def remote_url(args: argparse.Namespace) -> str | None:
    """MEMLANE_API_URL: the server a command goes through instead of the data directory."""
    return args.configuration.client.api_url


def open_client(args: argparse.Namespace) -> MemlaneClient:
    """MEMLANE_API_URL (with MEMLANE_API_KEY) names a server; otherwise the data directory."""
    client = args.configuration.client
    if client.api_url:
        return MemlaneClient(client.api_url, client.api_key)
    runtime = local_runtime(args)
    try:
        return LocalClient(runtime, cli_principal(runtime, args))
    except BaseException:
        runtime.close()
        raise
