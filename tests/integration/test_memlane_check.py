"""`memlane check` against the local server on loopback (what a user runs after `cdk deploy` or
`make run`): every check passes or is skipped with its reason, and the project is gone after; a
server that is down is one clear line and a non-zero exit."""

from __future__ import annotations

import pytest
from conftest_helpers import free_port

from memlane.cli import main
from memlane.config import Settings
from memlane.local.server import LocalServer


@pytest.mark.slow  # the real MiniLM embedder: the paraphrase check needs meaning
def test_every_check_passes_or_says_why_it_is_skipped(server, capsys):
    projects_before = {p["id"] for p in server.client.get("/v3/projects").json()["projects"]}
    code = main(["check", "--url", server.url, "--key", server.key, "--timeout", "60"])
    lines = capsys.readouterr().out.strip().splitlines()
    status = {line.split()[1]: line.split()[0] for line in lines}
    assert code == 0, "\n".join(lines)
    assert status == {
        "connect": "PASS", "search": "PASS", "save": "PASS", "ready": "PASS", "vector": "PASS", "rerank": "SKIP",
        "keyword": "PASS", "conversation": status["conversation"], "floor": status["floor"],
        "receipt": "PASS", "cleanup": "PASS",
    }
    # what a skip says: which capability this server lacks
    for line in lines:
        if line.startswith("SKIP"):
            assert "server has no" in line or "no rerank stage" in line, line
    assert "found its memory first" in next(line for line in lines if " vector " in line)
    assert "the embedded index of this server" in next(line for line in lines if " search " in line)
    assert "verified" in next(line for line in lines if " receipt " in line)
    # and the temporary project is gone
    assert {p["id"] for p in server.client.get("/v3/projects").json()["projects"]} == projects_before


@pytest.mark.slow
def test_a_wrong_key_fails_the_first_check_and_exits_non_zero(server, capsys):
    code = main(["check", "--url", server.url, "--key", "mlk_not_a_key"])
    lines = capsys.readouterr().out.strip().splitlines()
    assert code == 1
    assert len(lines) == 1 and lines[0].startswith("FAIL") and " connect " in lines[0] and "401" in lines[0]


def test_a_server_that_is_down_is_one_clear_line_and_exit_code_2(capsys):
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    code = main(["check", "--url", url, "--key", "mlk_anything"])
    captured = capsys.readouterr()
    assert code == 2
    assert captured.out == ""
    (line,) = captured.err.strip().splitlines()
    assert line.startswith(f"memlane check: cannot reach memlane at {url}")


@pytest.mark.slow
def test_a_server_over_s3_vectors_passes_every_check_and_says_what_was_checked_there(tmp_path, minilm, capsys,
                                                                                     monkeypatch):
    """The same checks against a server whose search index is S3VectorsIndex (moto with the fake
    QueryVectors): memlane check names the backend and what each check ran there."""
    from moto import mock_aws
    from s3vectors_fake import FakeS3Vectors

    from memlane.adapters.aws._boto import new_client
    from memlane.adapters.aws.s3vectors_index import S3VectorsIndex

    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        monkeypatch.setenv(name, "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    with mock_aws():
        fake = FakeS3Vectors(new_client("s3vectors"))
        fake.create_vector_bucket(vectorBucketName="memlane-check-vectors")
        index = S3VectorsIndex(fake, "memlane-check-vectors", minilm.dimension, embedder_id=minilm.id)
        srv = LocalServer(Settings(data_dir=tmp_path / "data"), host="127.0.0.1", port=free_port(), embedder=minilm,
                          search_index=index)
        key = srv.prepare()
        srv.start_in_thread()
        try:
            code = main(["check", "--url", f"http://127.0.0.1:{srv.port}", "--key", key, "--timeout", "60"])
        finally:
            srv.shutdown()
    lines = capsys.readouterr().out.strip().splitlines()
    status = {line.split()[1]: line.split()[0] for line in lines}
    assert code == 0, "\n".join(lines)
    assert {k: v for k, v in status.items() if v != "SKIP"} == {
        "connect": "PASS", "search": "PASS", "save": "PASS", "ready": "PASS", "vector": "PASS", "keyword": "PASS",
        "conversation": "PASS", "floor": "PASS", "receipt": "PASS", "cleanup": "PASS"}
    search = next(line for line in lines if " search " in line)
    assert "Amazon S3 Vectors, an index per organization" in search and "queryTexts" in search
    # the checks ran on S3 Vectors: both legs' QueryVectors, and the receipt's GetVectors by key
    sent = [op for op, _ in fake.calls]
    assert {"QueryVectors", "GetVectors", "PutVectors", "DeleteVectors", "CreateIndex"} <= set(sent)
    assert any("queryTexts" in p for op, p in fake.calls if op == "QueryVectors")
