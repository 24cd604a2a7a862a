"""SSRF refusals through the API (reliability row 14): a default server refuses internal targets
with a clear 400 before anything is fetched; with --allow-private-network, link-local and cloud
metadata stay refused, also when a page redirects there."""

from __future__ import annotations

import pytest
from docsets_site import index, pages_by_path

pytestmark = pytest.mark.integration


@pytest.mark.parametrize(("base_url", "reason"), [
    ("http://169.254.169.254/", "169.254.169.254 is a cloud metadata address"),
    ("http://169.254.10.10/", "169.254.10.10 is a link-local address"),
    ("http://10.0.0.5/", "10.0.0.5 is a private address"),
    ("http://192.168.1.20:8080/", "192.168.1.20 is a private address"),
    ("http://[::1]/", "::1 is a loopback address"),
    ("http://2130706433/", "host '2130706433' is the IP address 127.0.0.1, a loopback address"),
    ("http://0x7f000001/", "host '0x7f000001' is the IP address 127.0.0.1, a loopback address"),
    ("http://[::ffff:169.254.169.254]/", "an IPv4-mapped IPv6 address of 169.254.169.254"),
])
def test_default_server_refuses_internal_addresses(public_server, base_url, reason):
    r = public_server.client.post("/index", json={"baseUrl": base_url, "seedSlug": "/latest/meta-data/"})
    assert r.status_code == 400, r.text
    error = r.json()["error"]
    assert error.startswith("baseUrl: refused '") and reason in error, error
    assert public_server.client.get("/status").json() == {"docsets": []}


def test_default_server_refuses_loopback_sites_and_other_schemes(public_server, site):
    c = public_server.client
    loop = c.post("/index", json={"baseUrl": site.url, "seedSlug": "/docs/"})
    assert loop.status_code == 400 and "127.0.0.1 is a loopback address" in loop.json()["error"]
    named = c.post("/index", json={"baseUrl": f"http://localhost:{site.port}", "seedSlug": "/docs/"})
    assert named.status_code == 400 and "loopback" in named.json()["error"]
    for url in ("file:///etc/passwd", "ftp://example.com/docs", "gopher://example.com/"):
        r = c.post("/index", json={"baseUrl": url, "seedSlug": "/"})
        assert r.status_code == 400
        assert r.json() == {"error": "baseUrl: must be an absolute http or https URL"}
    creds = c.post("/index", json={"baseUrl": "http://user:pw@example.com/", "seedSlug": "/"})
    assert creds.status_code == 400 and creds.json() == {"error": "baseUrl: must not contain credentials"}
    assert site.paths_hit() == []  # nothing was fetched
    assert c.get("/status").json() == {"docsets": []}


def test_a_refused_site_on_this_machine_or_network_says_which_flag_allows_it(public_server, site):
    c = public_server.client
    for base_url in (site.url, f"http://localhost:{site.port}", "http://10.0.0.5/", "http://[::1]/"):
        error = c.post("/index", json={"baseUrl": base_url, "seedSlug": "/docs/"}).json()["error"]
        assert error.endswith("; to index docs served on this machine or your network, start memlane with "
                              "--allow-private-network (memlane serve --allow-private-network, make run "
                              "ARGS=--allow-private-network, memlane docs index URL --allow-private-network, or "
                              "MEMLANE_ALLOW_PRIVATE_NETWORK=1)"), error
    # what no flag allows gets no such hint
    for base_url in ("http://169.254.169.254/", "http://169.254.10.10/"):
        error = c.post("/index", json={"baseUrl": base_url, "seedSlug": "/"}).json()["error"]
        assert "--allow-private-network" not in error, error


def test_a_redirect_to_an_internal_address_is_refused_at_the_hop(docs_server, site):
    site.raw("/docs/sneaky", 302, b"", {"Location": "http://169.254.169.254/latest/meta-data/iam"})
    site.html("/docs/", "Guide Home", "Welcome to the frobnicator guide for operators and developers alike.",
              links=("/docs/sneaky",))
    docset_id = index(docs_server, site)["docsetId"]
    docs_server.wait_ready(docset_id)
    sneaky = pages_by_path(docs_server, docset_id)["/docs/sneaky"]
    assert sneaky["status"] == "error"
    assert sneaky["errorMessage"] == (
        "url: refused 'http://169.254.169.254/latest/meta-data/iam': 169.254.169.254 is a cloud metadata "
        f"address (redirected from {site.url}/docs/sneaky)")
    assert docs_server.store.get_page(docset_id, sneaky["id"]).attempts == 1  # not retried


def test_page_size_and_page_count_caps(tmp_path, site):

    from docsets_site import FAST, start_server

    running = start_server(tmp_path / "caps", settings=FAST.model_copy(update={"max_page_bytes": 20_000}))
    try:
        site.raw("/docs/huge", 200, b"<html><body><p>" + b"big " * 10_000 + b"</p></body></html>",
                 {"Content-Type": "text/html"})
        site.html("/docs/", "Guide Home", "Welcome to the frobnicator guide for operators and developers.",
                  links=("/docs/huge", "/docs/install", "/docs/config", "/docs/new", "/docs/orphan"))
        docset_id = index(running, site)["docsetId"]
        running.wait_ready(docset_id)
        huge = pages_by_path(running, docset_id)["/docs/huge"]
        assert (huge["status"], huge["errorMessage"]) == ("error", "page exceeds 20000 bytes")
        assert running.store.get_page(docset_id, huge["id"]).attempts == 1  # never retried
        capped = index(running, site, seedSlug="/docs/install", name="Capped", maxPages=2)["docsetId"]
        body = running.wait_ready(capped)
        assert body["indexStatus"]["totalPages"] == 2
    finally:
        running.client.close()
        running.server.shutdown()
