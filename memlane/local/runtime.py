"""The one local runtime: the embedded default composed once, for every host on this machine.

`memlane serve` (memlane.local.server), `memlane mcp` over a data directory (memlane.local.mcp)
and the CLI's local commands (memlane.cli) all run on a `LocalRuntime`: the SQLite stack of
memlane.local.compose with the complete Services built in one go (rate limiter, background
executor, the ingestion worker's wake-up, connections with their sync runner), the ingestion
worker, the hourly forget sweep, documentation sets with their crawl runner, and the resolver
(MemlaneApi). So the same rate limits, validation, idempotency and background work apply
whichever way a request comes in.

One organization rule: a name given (`--org` or MEMLANE_ORG) names the organization (by slug,
created when new, as `memlane keys create --org` does); otherwise it is the organization of the
key `memlane serve` created on first start (the key `make run` prints), else "default".
"""

from __future__ import annotations

import importlib.util
import logging
import threading
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from memlane.adapters.local.private_files import write_private
from memlane.api.app import MemlaneApi
from memlane.api.auth import authorizer_context
from memlane.api.inprocess import call, in_process
from memlane.config import Settings
from memlane.config.apps import ConnectionApps
from memlane.config.docsets import DocsetSettings
from memlane.config.local import LocalSettings
from memlane.documents.forget import forget_expired
from memlane.domain.models import ApiKey, Document, Organization
from memlane.domain.principal import Principal
from memlane.local.compose import LocalStack, build_local
from memlane.local.connections import LocalSyncRunner
from memlane.local.periodic import PeriodicJob
from memlane.local.worker import IngestWorker
from memlane.mcp.backend import DOCS_NEED_A_SERVER, Dispatch, InProcessBackend
from memlane.ports import SearchIndex, Services
from memlane.services.keys import create_key, ensure_organization, hash_key
from memlane.services.ratelimit import InMemoryRateLimiter

log = logging.getLogger(__name__)

KEY_FILE = "local-api-key"  # the first-start key, kept in the data directory (mode 0600)
FORGET_EVERY_SECONDS = 3600
DEFAULT_ORG = "default"


def org_name(flag: str | None, configured: str | None = None) -> str | None:
    """The organization a host was told to act as: `--org`, else MEMLANE_ORG (`configured`,
    LocalSettings.org), else None (the default organization, `LocalRuntime.organization`)."""
    chosen = (flag or configured or "").strip()
    return chosen or None


class LocalRuntime:
    """`docsets`: compose documentation sets (their crawler too); None means whenever
    memlane.local.docsets is installed. `public_url`: where the server listens (connections'
    OAuth callback and webhooks; MEMLANE_PUBLIC_URL wins). `docset_settings`, `local` and
    `apps`: the parts of the configuration the host read (memlane.config.local; their defaults
    when not given). Nothing runs until `start()`; a one-shot command uses `drain()` instead of
    the worker thread."""

    def __init__(self, settings: Settings, *, embedder: Any = None, summarizer: Any = None,
                 media_readers: Any = None, docsets: bool | None = True, allow_private_network: bool = False,
                 docset_settings: DocsetSettings | None = None, public_url: str | None = None,
                 local: LocalSettings | None = None, apps: ConnectionApps | None = None,
                 search_index: SearchIndex | None = None) -> None:
        self.settings = settings
        doorbell = threading.Event()  # rung when a document is queued: wakes the worker

        def enqueued(_doc: Document | None = None) -> None:
            doorbell.set()

        self._background = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memlane-bg")
        # Connections (spec §11): due syncs every minute, at once on "sync now". The runner is the
        # connections' dispatcher, so it exists before the Services and reads them when it runs.
        self.connection_runner = LocalSyncRunner(lambda: self.services)
        self.stack: LocalStack = build_local(
            settings, embedder=embedder, summarizer=summarizer, media_readers=media_readers,
            on_enqueued=enqueued, background=self._background.submit,
            rate_limiter=InMemoryRateLimiter(), connection_dispatcher=self.connection_runner,
            public_url=public_url, local=local, apps=apps, search_index=search_index)
        self.services: Services = self.stack.services
        self.worker = IngestWorker(self.services, self.stack.queue, doorbell=doorbell)
        self.forget_job = PeriodicJob("forget", FORGET_EVERY_SECONDS, lambda: forget_expired(self.services))
        if docsets is None:
            docsets = importlib.util.find_spec("memlane.local.docsets") is not None
        self.docsets = None
        if docsets:
            from memlane.local.docsets import LocalDocsets

            self.docsets = LocalDocsets(self.stack, allow_private_network=allow_private_network,
                                        settings=docset_settings)
        self.api = MemlaneApi(self.services, docsets=self.docsets.context if self.docsets else None)
        self._started = False
        self._crawling = False
        self._closed = False

    # ------------------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        """Run the background work: the ingestion worker, the forget sweep, connection syncs and
        documentation crawls (the queues are durable: what one process left, the next resumes)."""
        self.worker.start()
        self.forget_job.start()
        self.connection_runner.start()
        if self.docsets is not None:
            self.docsets.start()
        self._started = True

    def start_crawls(self) -> None:
        """Run the documentation crawls alone (a CLI command following one): no ingestion worker,
        forget sweep or connection syncs."""
        if self.docsets is not None and not self._started and not self._crawling:
            self.docsets.start()
            self._crawling = True

    def drain(self) -> int:
        """Process every queued document now, in this thread (one-shot commands)."""
        return self.worker.drain()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._started:
            self.forget_job.stop()
            self.connection_runner.stop()
            if self.docsets is not None:
                self.docsets.stop()
            self.worker.stop()
        elif self._crawling and self.docsets is not None:
            self.docsets.stop()
        self._background.shutdown(wait=True)
        self.stack.close()

    def __enter__(self) -> LocalRuntime:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------------------ who is calling

    def local_key(self) -> ApiKey | None:
        """The key `memlane serve` created on first start, while it is active."""
        path = self.settings.data_dir / KEY_FILE
        if not path.exists():
            return None
        key = self.stack.metadata.find_api_key_by_hash(hash_key(path.read_text().strip()))
        return key if key is not None and key.active else None

    def organization(self, name: str | None = None) -> Organization:
        """The one organization rule (module docstring)."""
        md = self.stack.metadata
        if name:
            return ensure_organization(md, name)[0]
        key = self.local_key()
        org = md.get_organization(key.organization_id) if key is not None else None
        return org or ensure_organization(md, DEFAULT_ORG)[0]

    def principal(self, org: str | None = None, user_id: str = "local") -> Principal:
        """Who a local host acts as in the organization of the rule: the first-start key where it
        belongs to that organization (its rate limit and rights), else a local caller with the
        default rate limit."""
        chosen = self.organization(org)
        key = self.local_key()
        if key is not None and key.organization_id == chosen.id:
            return Principal(organization_id=chosen.id, key_id=key.id, user_id=user_id,
                             rate_limit_per_minute=key.rate_limit_per_minute, can_manage_keys=key.can_manage_keys)
        return Principal(organization_id=chosen.id, key_id=f"{user_id}-local", user_id=user_id)

    # ------------------------------------------------------------------------------ requests

    def dispatch(self, principal: Principal) -> Dispatch:
        """(method, path, body, query) -> (status, answer) through the resolver as `principal`."""
        return in_process(self.api.handle, authorizer_context(principal))

    def request(self, principal: Principal, method: str, path: str, body: Any = None,
                query: Mapping[str, Any] | None = None, headers: Mapping[str, str] | None = None) -> tuple[int, Any]:
        """One request through the resolver as `principal`, with extra headers (Idempotency-Key)."""
        return call(self.api.handle, authorizer_context(principal), method, path, body, query, headers)

    def mcp_backend(self, principal: Principal, *, close_runtime: bool = True) -> InProcessBackend:
        """The MCP tools' backend over this runtime (`close_runtime`: closing it closes the runtime)."""
        return InProcessBackend(self.dispatch(principal), f"memlane data directory {self.settings.data_dir}",
                                docs_unavailable=None if self.docsets is not None else DOCS_NEED_A_SERVER,
                                on_close=self.close if close_runtime else None)


def first_start_key(stack: LocalStack, data_dir: Path) -> str | None:
    """Create a key for the default organization on first start and keep it (mode 0600) in the
    data directory so `make run` can print it on every start. Returns it while it is active."""
    path = data_dir / KEY_FILE
    md = stack.metadata
    if not md.list_api_keys():
        secret, _, _ = create_key(md, DEFAULT_ORG, "local", can_manage_keys=True)
        write_private(path, (secret + "\n").encode())
        return secret
    if path.exists():
        secret = path.read_text().strip()
        key = md.find_api_key_by_hash(hash_key(secret))
        if key is not None and key.active:
            if not key.can_manage_keys:  # kept from before keys could manage keys
                md.put_api_key(key.model_copy(update={"can_manage_keys": True}))
            return secret
    return None
