"""The command line says what it does (issue 23, item 6): data-directory commands refuse a server,
reads leave no data directory behind, an unreachable server is one line, a closed pipe is quiet,
keys revoke by any unique start, export without --project backs up everything, counts are
singular when they are one, and libraries' chatter stays hidden unless --verbose."""

from __future__ import annotations

import io
import json
import logging
import os
import socket
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from memlane.cli import main
from memlane.cli.docs import Progress
from memlane.cli.quiet import OWN_RECORDS_ONLY, quiet_third_party


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def data_dir(cli_data_dir) -> Path:
    return cli_data_dir


@pytest.fixture
def hashing(cli_hashing):
    """The local runtime with the hashing embedder (no model to load)."""


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --------------------------------------------------------------------------- data directory or server


@pytest.mark.parametrize("argv, hint", [
    (["keys", "list"], "`memlane keys` works on the local data directory; unset MEMLANE_API_URL or use the web app"),
    (["doctor"], "`memlane doctor` works on the local data directory; unset MEMLANE_API_URL (or check a deployed "
                 "stack with --aws)"),
    (["export"], "`memlane export` works on the local data directory; unset MEMLANE_API_URL (or read a deployed "
                 "stack with --aws)"),
    (["forget"], "`memlane forget` works on the local data directory; unset MEMLANE_API_URL"),
    (["reindex"], "`memlane reindex` works on the local data directory; unset MEMLANE_API_URL (or fill a deployed "
                  "stack's index with --aws)"),
])
def test_data_directory_commands_refuse_a_server(data_dir, monkeypatch, capsys, argv, hint):
    monkeypatch.setenv("MEMLANE_API_URL", "http://127.0.0.1:7432")
    code, out, err = run(capsys, *argv)
    assert (code, out, err) == (2, "", f"memlane: {hint}\n")
    assert not data_dir.exists()


@pytest.mark.parametrize("argv", [["keys", "list"], ["keys", "revoke", "abc"], ["doctor"], ["recall", "ferry"],
                                  ["export"], ["forget"], ["docs", "list"]])
def test_a_read_leaves_no_data_directory_behind(data_dir, capsys, argv):
    code, out, err = run(capsys, *argv)
    assert code == 1 and out == ""
    assert err == (f"memlane: no memlane data directory at {data_dir} (nothing saved yet; --data-dir or "
                   "MEMLANE_DATA_DIR names another)\n")
    assert not data_dir.exists()


def test_an_unreachable_server_is_one_line(data_dir, monkeypatch, capsys):
    url = f"http://127.0.0.1:{closed_port()}"
    monkeypatch.setenv("MEMLANE_API_URL", url)
    for argv in (["recall", "ferry"], ["remember", "the ferry leaves at nine"], ["docs", "list"]):
        code, out, err = run(capsys, *argv)
        assert code == 1 and out == ""
        assert err.startswith(f"memlane: cannot reach memlane at {url}: ") and err.count("\n") == 1, err
    monkeypatch.setenv("MEMLANE_API_URL", "localhost:7432")  # no scheme
    code, _, err = run(capsys, "recall", "ferry")
    assert code == 1 and err.startswith("memlane: cannot reach memlane at localhost:7432: ")


def test_serve_on_a_busy_port_says_so_in_one_line_before_anything_else(tmp_path, capsys):
    # Given another server listening on the port
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        # When memlane serve is started on it
        code, out, err = run(capsys, "serve", "--port", str(port), "--data-dir", str(tmp_path / "d"))
    # Then it prints no "listening", no key and no sign-in link: one line naming the port and how to pick another
    assert (code, out) == (2, "")
    assert err == (f"memlane: port {port} on 127.0.0.1 is already in use (is another memlane serve running?); "
                   f"pick another with --port: memlane serve --port {port + 1} (make run PORT={port + 1})\n")
    assert not (tmp_path / "d").exists()  # and nothing was created: no data directory, no key


# --------------------------------------------------------------------------- a closed pipe


class RecallServer:
    """A loopback stand-in for memlane answering /v3/recall with many results."""

    def __init__(self, results: int) -> None:
        body = json.dumps({"results": [{"document_id": f"d{i}", "title": f"Note {i}", "score": 0.5,
                                        "chunks": [{"content": "x" * 200}]} for i in range(results)],
                           "total": results, "query_time_ms": 3.0}).encode()

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # noqa: ANN002
                return

            def do_POST(self):  # noqa: N802
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def test_a_closed_pipe_ends_quietly(tmp_path):
    server = RecallServer(2000)  # ~1 MB of JSON: far more than a pipe holds
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "MEMLANE_API_URL": server.url, "MEMLANE_DATA_DIR": str(tmp_path / "data"),
           "PYTHONPATH": os.pathsep.join([str(root), str(root / "clients" / "python")])}
    try:
        proc = subprocess.Popen([sys.executable, "-m", "memlane.cli", "recall", "--json", "ferry"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        assert proc.stdout is not None and proc.stderr is not None
        first = proc.stdout.readline()  # `| head -1`
        proc.stdout.close()
        err = proc.stderr.read().decode()
        code = proc.wait(timeout=60)
    finally:
        server.close()
    assert first == b"{\n"
    assert err == "" and code == 141


# --------------------------------------------------------------------------- keys


def test_keys_revoke_by_any_unique_start(data_dir, capsys):
    ids = []
    for name in ("laptop", "phone"):
        code, out, _ = run(capsys, "keys", "create", "--name", name)
        assert code == 0
        ids.append(out.split()[2])
    # Every key's prefix starts with mlk_: ambiguous, and the error lists the matches.
    code, _, err = run(capsys, "keys", "revoke", "mlk_")
    assert code == 1
    assert err.startswith("memlane: key: 'mlk_' matches 2 active keys: ")
    assert ids[0] in err and ids[1] in err and "laptop" in err and "phone" in err
    start = next(ids[0][:n] for n in range(1, 37) if not ids[1].startswith(ids[0][:n]))
    code, out, _ = run(capsys, "keys", "revoke", start)
    assert (code, out) == (0, f"revoked {ids[0]}\n")
    listed = run(capsys, "keys", "list")[1].splitlines()
    assert [line.split()[0] for line in listed if "revoked" in line] == [ids[0]]
    # The prefix as `keys list` shows it (with its ellipsis) works too.
    phone_prefix = next(line.split()[1] for line in listed if line.startswith(ids[1]))
    assert run(capsys, "keys", "revoke", phone_prefix)[:2] == (0, f"revoked {ids[1]}\n")
    code, _, err = run(capsys, "keys", "revoke", ids[0])
    assert code == 1 and err == f"memlane: no active key {ids[0]!r} (see `memlane keys list`)\n"


def test_keys_revoke_by_the_name_keys_list_shows(data_dir, capsys):
    made = {}
    for org, name in (("default", "laptop"), ("default", "phone"), ("family", "phone")):
        code, out, _ = run(capsys, "keys", "create", "--org", org, "--name", name)
        assert code == 0
        made[(org, name)] = out.split()[2]
    # Given two keys named "phone" (in two organizations), the name alone is ambiguous: both are listed
    code, out, err = run(capsys, "keys", "revoke", "phone")
    assert (code, out) == (1, "")
    assert err.startswith("memlane: key: 'phone' matches 2 active keys: ") and err.count("\n") == 1
    assert made[("default", "phone")] in err and made[("family", "phone")] in err
    # and a unique name revokes its key, as its id would
    assert run(capsys, "keys", "revoke", "laptop")[:2] == (0, f"revoked {made[('default', 'laptop')]}\n")
    # once revoked, "phone" of the family organization is revoked by its id, then the other by its name
    assert run(capsys, "keys", "revoke", made[("family", "phone")])[0] == 0
    assert run(capsys, "keys", "revoke", "phone")[:2] == (0, f"revoked {made[('default', 'phone')]}\n")
    code, _, err = run(capsys, "keys", "revoke", "phone")
    assert code == 1 and err == "memlane: no active key 'phone' (see `memlane keys list`)\n"


# --------------------------------------------------------------------------- files named on the command line


@pytest.mark.parametrize("argv, line", [
    (["remember", "--file", "missing.md"], "cannot read missing.md (--file): no such file or directory"),
    (["import", "missing.jsonl"], "cannot read missing.jsonl (FILE): no such file or directory"),
    (["invoke", "api", "missing.json"], "cannot read missing.json (EVENT): no such file or directory"),
])
def test_a_missing_file_is_one_line_and_exit_2(data_dir, tmp_path, monkeypatch, capsys, argv, line):
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, *argv)
    assert (code, out, err) == (2, "", f"memlane: {line}\n")
    assert not data_dir.exists()  # nothing was opened or made before the file was read


def test_a_file_that_cannot_be_written_or_read_as_text_is_one_line_too(data_dir, tmp_path, capsys, hashing):
    assert run(capsys, "remember", "The ferry leaves at nine.")[0] == 0
    code, out, err = run(capsys, "export", "--out", str(tmp_path / "no-such-folder" / "backup.jsonl"))
    assert (code, out) == (2, "")
    assert err == f"memlane: cannot write {tmp_path / 'no-such-folder' / 'backup.jsonl'} (--out): no such file or directory\n"
    folder = run(capsys, "remember", "--file", str(tmp_path))
    assert folder[0] == 2 and folder[2] == f"memlane: cannot read {tmp_path} (--file): is a directory\n"
    binary = tmp_path / "photo.jpg"
    binary.write_bytes(b"\xff\xd8\xff\xe0 not an export")
    code, _, err = run(capsys, "import", str(binary))
    assert (code, err) == (2, f"memlane: {binary} is not UTF-8 text: `memlane import` reads what `memlane export` wrote\n")


# --------------------------------------------------------------------------- a read never creates a project


def test_recall_in_an_unknown_project_is_an_error_listing_the_projects(data_dir, capsys, hashing):
    assert run(capsys, "remember", "The ferry leaves at nine.", "--project", "Travel")[0] == 0
    code, out, err = run(capsys, "recall", "ferry", "--project", "Nope")
    assert (code, out) == (1, "")
    assert err == "memlane: project: no project named 'Nope'; the projects are: 'Default', 'Travel'\n"
    names = run(capsys, "recall", "ferry", "--project", "travel", "--json")
    assert names[0] == 0 and json.loads(names[1])["total"] == 1
    # and the read created nothing: asked again, "Nope" is still not among the projects
    assert run(capsys, "recall", "ferry", "--project", "Nope")[2] == err


# --------------------------------------------------------------------------- export and import, plurals


def test_export_without_project_backs_up_every_project_and_import_restores_it(data_dir, tmp_path, capsys,
                                                                                hashing):
    code, out, _ = run(capsys, "remember", "The ferry leaves at nine.", "--project", "Travel")
    assert code == 0 and out.splitlines()[0].endswith("(1 chunk, ready)")
    assert run(capsys, "remember", "Passport renewal is due in March.", "--project", "Travel")[0] == 0
    assert run(capsys, "remember", "Dentist on Thursday at 3pm.", "--project", "Health")[0] == 0
    code, out, _ = run(capsys, "recall", "ferry", "--project", "Travel", "--limit", "1")
    assert code == 0 and out.splitlines()[-1].startswith("(1 result in ")

    backup = tmp_path / "backup.jsonl"
    code, _, err = run(capsys, "export", "--out", str(backup))
    assert code == 0 and err == "exported 3 documents from 3 projects\n"  # the default project, empty
    lines = [json.loads(line) for line in backup.read_text().splitlines()]
    headers = [line["project"]["name"] for line in lines if "format" in line]
    assert sorted(headers) == ["Default", "Health", "Travel"]
    code, _, err = run(capsys, "export", "--project", "Health")
    assert code == 0 and err.endswith("exported 1 document from Health\n")

    restored = tmp_path / "restored"
    code, out, _ = run(capsys, "--data-dir", str(restored), "import", str(backup))
    assert code == 0
    result = json.loads(out)
    assert (result["imported"], result["skipped"], result["expired"]) == (3, 0, 0)
    assert {p["project"]: p["imported"] for p in result["projects"]} == {"Default": 0, "Travel": 2, "Health": 1}
    code, out, _ = run(capsys, "--data-dir", str(restored), "recall", "dentist", "--project", "Health", "--json")
    assert code == 0 and json.loads(out)["results"][0]["title"].startswith("Dentist on Thursday")


# --------------------------------------------------------------------------- quiet unless --verbose


@pytest.fixture
def clean_logging(monkeypatch):
    for key in ("HF_HUB_DISABLE_PROGRESS_BARS", "TQDM_DISABLE", "TRANSFORMERS_VERBOSITY",
                "TRANSFORMERS_NO_ADVISORY_WARNINGS"):
        monkeypatch.delenv(key, raising=False)
    root = logging.getLogger()
    level = root.level
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    # Other tests in this process may have quietened memlane's own loggers: start from the defaults.
    own = [logging.getLogger(n) for n in ("memlane", "memlane.cli")]
    saved = [(lg.level, lg.disabled) for lg in own]
    for lg in own:
        lg.setLevel(logging.NOTSET)
        lg.disabled = False
    # transformers, once imported by an earlier test, gives its logger a handler of its own on the stderr
    # pytest captured then (closed since) and stops propagation: start from a logger that propagates.
    library = logging.getLogger("transformers")
    library_state = (library.handlers[:], library.propagate)
    library.handlers, library.propagate = [], True
    yield stream
    library.handlers, library.propagate = library_state
    for lg, (lvl, disabled) in zip(own, saved, strict=True):
        lg.setLevel(lvl)
        lg.disabled = disabled
    root.removeHandler(handler)
    root.removeFilter(OWN_RECORDS_ONLY)
    root.setLevel(level)
    for name in ("onnxruntime", "transformers"):
        logging.getLogger(name).setLevel(logging.NOTSET)


def test_libraries_chatter_is_hidden_unless_verbose(clean_logging):
    quiet_third_party(verbose=False)
    assert os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] == "1" and os.environ["TQDM_DISABLE"] == "1"
    logging.info("Quantizing weights")  # what onnxruntime.quantization logs, on the root logger
    logging.getLogger("onnxruntime").info("session created")
    logging.getLogger("memlane.cli").info("memlane's own progress")
    logging.getLogger("transformers").warning("a real problem")
    assert clean_logging.getvalue().splitlines() == ["memlane's own progress", "a real problem"]


def test_verbose_shows_everything(clean_logging):
    quiet_third_party(verbose=True)
    assert "TQDM_DISABLE" not in os.environ
    logging.info("Quantizing weights")
    assert clean_logging.getvalue().splitlines() == ["Quantizing weights"]


# --------------------------------------------------------------------------- docs progress on a terminal


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_is_a_bar_on_a_terminal_and_lines_elsewhere():
    tty = Terminal()
    bar = Progress(tty)
    for done, total in ((0, 1), (1, 4), (1, 4), (4, 4)):
        bar.show(done, total)
    bar.end()
    assert tty.getvalue() == ("\r[----------------------------] 0/1 page"
                              "\r[#######---------------------] 1/4 pages"
                              "\r[############################] 4/4 pages\n")
    plain = io.StringIO()
    lines = Progress(plain)
    for done, total in ((0, 1), (1, 4), (1, 4), (4, 4)):
        lines.show(done, total)
    lines.end()
    assert plain.getvalue() == "0/1 page done\n1/4 pages done\n4/4 pages done\n"


# --------------------------------------------------------------------------- weak matches (issue 35)


class _Answering:
    """A client whose recall answers with the given results (strong and weak), recording what it was asked."""

    def __init__(self, results: list[dict]) -> None:
        self.results = results
        self.asked: list[dict] = []

    def __enter__(self) -> _Answering:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def recall(self, query: str, **fields) -> dict:
        self.asked.append({"query": query, **fields})
        return {"results": self.results, "total": len(self.results), "query_time_ms": 3.0, "floor": 0.24, "strong": 0.65}


def _result(title: str, match: str) -> dict:
    return {"document_id": f"d-{title}", "title": title, "score": 0.5, "relevance": 0.4, "match": match,
            "chunks": [{"content": f"{title} text"}]}


@pytest.mark.parametrize("results, first_line", [
    ([_result("Passport", "weak")], "no strong match; possibly related (low confidence):"),
    ([_result("Router", "strong"), _result("Passport", "weak")], "[1] Router  (score 0.500)  d-Router"),
])
def test_recall_marks_weak_matches_and_says_when_nothing_is_strong(monkeypatch, capsys, results, first_line):
    import memlane.cli.memories as memories

    client = _Answering(results)
    monkeypatch.setattr(memories, "remote_url", lambda args: "http://127.0.0.1:1")
    monkeypatch.setattr(memories, "open_client", lambda args: client)
    monkeypatch.setattr(memories, "project_id", lambda c, p: None)
    code, out, _ = run(capsys, "recall", "travel document")
    lines = out.splitlines()
    assert code == 0 and lines[0] == first_line
    assert any(line.startswith("[") and "Passport" in line and "; weak match)" in line for line in lines)
    assert client.asked[0].get("strict") is None  # weak matches asked for by default
    run(capsys, "recall", "travel document", "--strict")
    assert client.asked[1]["strict"] is True
