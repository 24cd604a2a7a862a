"""Finding 7: an OAuth flow is bound to the principal that started it. The state is sealed (it
carries the organization and the key), the callback links nothing by itself, and only a member of
the starting organization can confirm, once; a member of another organization who was lured into
consenting cancels it instead of linking their account into someone else's organization."""

from __future__ import annotations

from datetime import UTC, datetime
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from memlane.connections import service  # noqa: E402
from memlane.connections.schemas import ConnectionIn  # noqa: E402
from memlane.domain.connections import ConnectionStatus, Provider
from memlane.domain.errors import ForbiddenError, InvalidInputError  # noqa: E402
from memlane.domain.models import ApiKey  # noqa: E402
from memlane.domain.principal import Principal

REPO = "acme/bound"


@pytest.fixture
def world(github_world):
    return github_world(REPO, {"README.md": b"# Bound\n"})


def consent(world, who):
    """Start a flow as `who` and consent at the (fake) provider: the callback's query."""
    started = service.start_connection(world.svc, who, ConnectionIn(provider=Provider.GITHUB,
                                                                    options={"repositories": [REPO]}))
    answer = httpx.get(started.authorization_url, follow_redirects=False)
    back = {k: v[0] for k, v in parse_qs(urlsplit(answer.headers["Location"]).query).items()}
    return started, back


def flow_of(url: str) -> str:
    parts = urlsplit(url)
    assert parts.path == "/connections/confirm"
    return parse_qs(parts.query)["flow"][0]


def test_the_callback_alone_links_nothing(world):
    started, back = consent(world, world.a)
    url = service.receive_callback(world.svc, state=back["state"], code=back["code"])
    assert flow_of(url)
    conn = world.ports.store.get_connection(world.a.organization_id, started.connection.id)
    assert conn.status == ConnectionStatus.AUTHORIZING and conn.sealed_tokens is None


def test_another_organizations_member_cannot_confirm_and_cancels_the_flow(world):
    started, back = consent(world, world.a)
    flow = flow_of(service.receive_callback(world.svc, state=back["state"], code=back["code"]))
    with pytest.raises(ForbiddenError):
        service.confirm_authorization(world.svc, world.b, flow)
    with pytest.raises(InvalidInputError):  # used: the starting organization cannot finish it either
        service.confirm_authorization(world.svc, world.a, flow)
    conn = world.ports.store.get_connection(world.a.organization_id, started.connection.id)
    assert conn.status != ConnectionStatus.ACTIVE
    assert world.ports.store.list_connections(world.b.organization_id) == []


def test_a_member_of_the_starting_organization_confirms_once(world):
    started, back = consent(world, world.a)
    flow = flow_of(service.receive_callback(world.svc, state=back["state"], code=back["code"]))
    colleague = Principal(organization_id=world.a.organization_id, key_id=world.a.key_id)
    assert service.confirm_authorization(world.svc, colleague, flow).status == ConnectionStatus.ACTIVE
    with pytest.raises(InvalidInputError):
        service.confirm_authorization(world.svc, colleague, flow)


def test_a_forged_or_altered_state_is_refused(world):
    started, back = consent(world, world.a)
    state = back["state"]
    for forged in ("forged", state[:-4] + ("AAAA" if not state.endswith("AAAA") else "BBBB"), state + "x"):
        with pytest.raises(InvalidInputError):
            service.receive_callback(world.svc, state=forged, code=back["code"])
    # and the genuine one still works once
    assert flow_of(service.receive_callback(world.svc, state=state, code=back["code"]))


def test_a_revoked_starting_key_voids_the_flow(world):
    world.svc.metadata.put_api_key(ApiKey(id="starter", organization_id=world.a.organization_id, name="cli",
                                          key_hash="0" * 64, prefix="mlk_x",
                                          revoked_at=datetime.now(UTC)))
    starter = Principal(organization_id=world.a.organization_id, key_id="starter")
    _, back = consent(world, starter)
    flow = flow_of(service.receive_callback(world.svc, state=back["state"], code=back["code"]))
    with pytest.raises(ForbiddenError):
        service.confirm_authorization(world.svc, world.a, flow)


def test_over_http_the_callback_redirects_to_the_web_apps_confirmation_page(secure_server):
    with secure_server.client("") as anon:
        r = anon.get("/oauth/callback", params={"state": "forged", "code": "c"})
        assert r.status_code == 400 and r.json()["error"].startswith("state:")
    with secure_server.client() as c:
        assert c.post("/v3/connections/confirm", json={"flow": "nope"}).status_code == 400
