"""The web app on the local server (memlane.local.webapp): its routes and files, never an API
route, and the one-time sign-in codes."""

from __future__ import annotations

import json
import re

import pytest

from memlane.api.app import MemlaneApi
from memlane.local.webapp import SIGN_IN_PATH, SignInCodes, WebApp
from memlane.webapp_policy import CONTENT_SECURITY_POLICY


@pytest.fixture
def build(tmp_path):
    dist = tmp_path / "dist"
    (dist / "assets").mkdir(parents=True)
    (dist / "index.html").write_text("<!doctype html><title>memlane</title>")
    (dist / "assets" / "index-AbCd1234.js").write_text("console.log(1)")
    (dist / "favicon.svg").write_text("<svg/>")
    (tmp_path / "secret.txt").write_text("not for the web")
    return dist


def get(app: WebApp, path: str, method: str = "GET"):
    return app.handle(method, path, {"host": "127.0.0.1:7432"}, b"")


@pytest.mark.parametrize("path", ["/", "/login", "/projects", "/projects/p1", "/projects/p1/settings", "/search",
                                  "/memories/0b7c", "/deletions/5e1a", "/graph", "/settings"])
def test_every_client_route_is_served_index_html_with_the_strict_policy(build, path) -> None:
    response = get(WebApp(build), path)
    assert response is not None and response.status == 200
    assert response.body.startswith(b"<!doctype html>")
    assert response.headers["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
    assert response.headers["X-Frame-Options"] == "DENY" and response.headers["Cache-Control"] == "no-cache"


def test_built_files_are_served_and_hashed_ones_cached_for_good(build) -> None:
    app = WebApp(build)
    script = get(app, "/assets/index-AbCd1234.js")
    assert script.body == b"console.log(1)" and "javascript" in script.headers["Content-Type"]
    assert "immutable" in script.headers["Cache-Control"]
    assert get(app, "/favicon.svg").headers["Cache-Control"] == "no-cache"
    head = get(app, "/", method="HEAD")
    assert head.body == b"" and int(head.headers["Content-Length"]) > 0


@pytest.mark.parametrize("path", ["/../secret.txt", "/assets/../../secret.txt", "/assets/", "/assets/missing.js",
                                  "/memories/a/b", "/deletions/a/b", "/v3/whoami", "/v3/deletions/5e1a", "/health",
                                  "/%2e%2e/secret.txt", "/assets\\..\\x"])
def test_anything_else_is_left_to_the_api(build, path) -> None:
    assert get(WebApp(build), path) is None


def test_only_reads_are_served_and_nothing_without_a_build(build, tmp_path) -> None:
    assert WebApp(build).handle("POST", "/", {}, b"{}") is None  # Vidurai's POST /
    assert WebApp(build).handle("DELETE", "/projects/x", {}, b"") is None
    assert get(WebApp(tmp_path / "not-built"), "/") is None


def test_no_client_route_shadows_a_route_of_the_api() -> None:
    from memlane.local.webapp import _APP_ROUTES

    spec = MemlaneApi(lambda: None).openapi()  # type: ignore[arg-type, return-value]
    shadowed = []
    for path, methods in spec["paths"].items():
        concrete = re.sub(r"\{[^}]+\}", "x", path)
        if {"get", "head"} & set(methods) and _APP_ROUTES.fullmatch(concrete):
            shadowed.append(path)
    assert shadowed == []
    assert "/v3/whoami" in spec["paths"] and "/" in spec["paths"]  # the check saw the whole API


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def redeem(app: WebApp, code: object, origin: str | None = "http://127.0.0.1:7432"):
    headers = {"host": "127.0.0.1:7432", **({"origin": origin} if origin else {})}
    return app.handle("POST", SIGN_IN_PATH, headers, json.dumps({"code": code}).encode())


def test_a_sign_in_code_works_once(build) -> None:
    app = WebApp(build)
    code = app.sign_in.issue("mlk_secret")
    first = redeem(app, code)
    assert first.status == 200 and json.loads(first.body) == {"key": "mlk_secret"}
    assert first.headers["Cache-Control"] == "no-store"
    again = redeem(app, code)
    # said to a person on the sign-in page: no field-name prefix ("code: …"), what to do next
    assert again.status == 401 and json.loads(again.body)["error"] == (
        "This sign-in link was already used or has expired. Restart `make run` for a new one, or paste the "
        "API key it printed.")


def test_a_sign_in_code_expires(build) -> None:
    clock = Clock()
    app = WebApp(build, SignInCodes(ttl_s=60, clock=clock))
    code = app.sign_in.issue("mlk_secret")
    clock.now += 61
    assert redeem(app, code).status == 401


def test_only_the_app_itself_may_redeem_a_code(build) -> None:
    app = WebApp(build)
    code = app.sign_in.issue("mlk_secret")
    refused = redeem(app, code, origin="http://localhost:3000")
    assert refused.status == 403
    assert redeem(app, code).status == 200  # the refused attempt did not use it up


@pytest.mark.parametrize("code", [None, "", 42, "x" * 500])
def test_a_missing_or_malformed_code_is_a_400_naming_it(build, code) -> None:
    response = redeem(WebApp(build), code)
    assert response.status == 400 and json.loads(response.body)["error"].startswith("code:")


# --------------------------------------------------------------------------- unknown paths

API_SEGMENTS = frozenset({"v3", "health", "mcp", ".well-known", "oauth", "webhooks"})
BROWSER = {"host": "127.0.0.1:7432", "accept": "text/html,application/xhtml+xml,*/*;q=0.8"}


@pytest.mark.parametrize("path", ["/nope", "/memories", "/projects/p1/extra/deep", "/login/again"])
def test_a_browser_opening_an_unknown_path_gets_the_app_with_status_404(build, path) -> None:
    response = WebApp(build).page_not_found("GET", path, BROWSER, API_SEGMENTS)
    assert response is not None and response.status == 404
    assert response.body.startswith(b"<!doctype html>")  # the app, which shows "Page not found"
    assert response.headers["Content-Security-Policy"] == CONTENT_SECURITY_POLICY


@pytest.mark.parametrize(("path", "headers"), [
    ("/nope", {"accept": "application/json"}),  # an API client
    ("/nope", {}),  # curl
    ("/v3/nope", BROWSER),  # the API's own space, even in a browser
    ("/oauth/nope", BROWSER),
    ("/.well-known/nope", BROWSER),
])
def test_api_clients_and_the_api_s_own_paths_keep_the_api_s_404(build, path, headers) -> None:
    assert WebApp(build).page_not_found("GET", path, headers, API_SEGMENTS) is None
    assert WebApp(build).page_not_found("POST", "/nope", BROWSER, API_SEGMENTS) is None


def test_the_local_gateway_serves_unknown_pages_the_app_and_unknown_api_paths_json(build, stack) -> None:
    from memlane.local.gateway import LocalGateway

    gateway = LocalGateway(MemlaneApi(stack.services), stack.services, webapp=WebApp(build))
    page = gateway.handle("GET", "/no/such/page", "", BROWSER, b"")
    assert page.status == 404 and page.body.startswith(b"<!doctype html>")
    api = gateway.handle("GET", "/v3/no-such-route", "", BROWSER, b"")
    assert api.status in (401, 404) and json.loads(api.body)["error"]
    curl = gateway.handle("GET", "/no/such/page", "", {"accept": "*/*"}, b"")
    assert curl.status in (401, 404) and json.loads(curl.body)["error"]
