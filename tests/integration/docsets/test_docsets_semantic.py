"""With the real embedding model: a question phrased unlike the page still finds it."""

from __future__ import annotations

import pytest
from docsets_site import index, retrieve

pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.fixture
def minilm_server(tmp_path, minilm):
    import httpx
    from conftest_helpers import free_port
    from docsets_site import FAST, Running

    from memlane.config import Settings
    from memlane.local.server import LocalServer

    srv = LocalServer(Settings(data_dir=tmp_path / "data"), host="127.0.0.1", port=free_port(),
                      embedder=minilm, allow_private_network=True, docset_settings=FAST)
    key = srv.prepare()
    srv.start_in_thread()
    url = f"http://127.0.0.1:{srv.port}"
    running = Running(srv, httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=60),
                      url, key)
    yield running
    running.client.close()
    srv.shutdown()


def test_semantic_question_finds_the_page(minilm_server, site):
    site.html("/docs/config", "Configuration", "Each option lives in the settings file; a wrong value stops "
              "the service at boot with a message naming the option.")
    docset_id = index(minilm_server, site)["docsetId"]
    minilm_server.wait_ready(docset_id, timeout=120)
    out = retrieve(minilm_server, "how do I set up the program on my machine", docsetIds=[docset_id],
                   mode="vector", maxChunksPerPage=1)
    assert out["results"][0]["url"] == f"{site.url}/docs/install"
    hybrid = retrieve(minilm_server, "what happens when a setting has a bad value", maxChunksPerPage=1)
    assert hybrid["results"][0]["url"] == f"{site.url}/docs/config"
