"""The memlane side of the connection tests: a local stack (SQLite, hashing embedder) whose
connections talk to a fake provider on loopback, two organizations, and helpers that drive a full
OAuth code flow and read back exactly what is stored."""

from __future__ import annotations

from dataclasses import dataclass, replace
from urllib.parse import parse_qs, urlsplit

import httpx
from fake_provider import CLIENT_ID, CLIENT_SECRET, FakeProvider
from fakes import FixedClock, HashEmbedder

from memlane.config import Settings
from memlane.connections import service
from memlane.connections.apps import StaticApps
from memlane.connections.schemas import ConnectionIn
from memlane.connections.sync import sync_connection
from memlane.domain.connections import Connection, Provider, SyncResult
from memlane.domain.models import Document
from memlane.domain.principal import Principal
from memlane.domain.requests import RecallIn
from memlane.ingest.summarize import LocalSummarizer
from memlane.local.compose import LocalStack, build_local
from memlane.local.worker import IngestWorker
from memlane.ports import OAuthApp
from memlane.recall.service import recall
from memlane.services.keys import ensure_organization


@dataclass
class Stored:
    """A document as a test compares it."""

    id: str
    title: str
    source_url: str | None
    current: bool  # the latest version (not superseded)
    content: str
    replaces: str | None


class World:
    def __init__(self, tmp_path, fake: FakeProvider | None, provider: Provider) -> None:
        self.stack: LocalStack = build_local(Settings(data_dir=tmp_path / "data"), embedder=HashEmbedder(),
                                             summarizer=LocalSummarizer())
        self.clock = FixedClock()
        self.svc = self.stack.services = replace(self.stack.services, clock=self.clock)
        self.fake = fake
        self.provider = provider
        self.ports = self.svc.connections
        assert self.ports is not None
        if fake is not None:
            self.ports.apps = StaticApps({provider.value: OAuthApp(
                client_id=CLIENT_ID, client_secret=CLIENT_SECRET, authorize_url=f"{fake.url}/oauth/authorize",
                token_url=f"{fake.url}/oauth/token", api_url=fake.url)})
        self.ports.public_url = "http://127.0.0.1:7432"
        org_a, _ = ensure_organization(self.stack.metadata, "acme")
        org_b, _ = ensure_organization(self.stack.metadata, "globex")
        self.a = Principal(organization_id=org_a.id, key_id="key-a")
        self.b = Principal(organization_id=org_b.id, key_id="key-b")

    def close(self) -> None:
        self.stack.close()

    # ------------------------------------------------------------------ connecting

    def connect(self, who: Principal, options: dict | None = None, **fields) -> Connection:
        """The whole code flow: the authorization URL memlane hands out, the provider's consent
        (approved by the fake), the redirect back with code and state, the callback."""
        started = service.start_connection(self.svc, who, ConnectionIn(provider=self.provider,
                                                                       options=options or {}, **fields))
        answer = httpx.get(started.authorization_url, follow_redirects=False)
        assert answer.status_code == 302, answer.text
        location = urlsplit(answer.headers["Location"])
        assert f"{location.scheme}://{location.netloc}{location.path}" == self.ports.callback_url()
        back = {k: v[0] for k, v in parse_qs(location.query).items()}
        out = service.complete_authorization(self.svc, who, state=back["state"], code=back["code"])
        assert out.status.value == "active", out
        conn = self.ports.store.get_connection(who.organization_id, out.id)
        assert conn is not None
        self.last_start = started
        return conn

    def sync(self, conn: Connection, **kwargs) -> SyncResult:
        result = sync_connection(self.svc, conn.organization_id, conn.id, **kwargs)
        assert result is not None, "the sync ran"
        return result

    def connection(self, conn: Connection) -> Connection:
        current = self.ports.store.get_connection(conn.organization_id, conn.id)
        assert current is not None
        return current

    def drain(self) -> None:
        self.clock.advance(hours=1)
        IngestWorker(self.svc, self.stack.queue).drain()

    # ------------------------------------------------------------------ reading back

    def documents(self, who: Principal, conn: Connection | None = None) -> list[Stored]:
        md = self.stack.metadata
        out = []
        for project in md.list_projects(who.organization_id):
            for d in md.list_documents(who.organization_id, project.id):
                if conn is not None and (d.metadata.get("connection") or {}).get("id") != conn.id:
                    continue
                out.append(Stored(d.id, d.title, d.source_url, d.superseded_by is None, d.content, d.updates_memory_id))
        return out

    def current(self, who: Principal, conn: Connection | None = None) -> dict[str, Stored]:
        """The latest version of every item, by title."""
        return {s.title: s for s in self.documents(who, conn) if s.current}

    def document(self, who: Principal, doc_id: str) -> Document | None:
        return self.stack.metadata.get_document(who.organization_id, doc_id)

    def assert_gone(self, who: Principal, doc_ids: list[str]) -> None:
        """Removed from the metadata store, the chunk records and both search legs."""
        indexed = self.stack.index.document_ids(who.organization_id)
        for doc_id in doc_ids:
            assert self.stack.metadata.get_document(who.organization_id, doc_id) is None
            assert self.stack.metadata.get_chunks(who.organization_id, doc_id) == []
            assert doc_id not in indexed

    def recall_titles(self, who: Principal, query: str, limit: int = 10) -> list[str]:
        found = recall(self.svc, who, RecallIn(query=query, limit=limit))
        return [r.title for r in found.results]
