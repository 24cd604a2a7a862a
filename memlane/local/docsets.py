"""Documentation sets in the embedded default: the SQLite docset store, a SafeFetcher for the
server's network policy, the crawl runner and its periodic refresh, composed for LocalServer.

The network policy is the one switch between "index the public web" (the default) and "also
index docs served on this machine or LAN" (`memlane serve --allow-private-network`, or
MEMLANE_ALLOW_PRIVATE_NETWORK=1). Link-local and cloud metadata addresses stay refused either way.
"""

from __future__ import annotations

from memlane.adapters.local.docset_store import SqliteDocsetStore
from memlane.config.docsets import DocsetSettings
from memlane.crawl.fetcher import FetchLimits, SafeFetcher
from memlane.crawl.ssrf import NetworkPolicy
from memlane.docsets.pages import CrawlContext, RobotsCache
from memlane.docsets.runner import CrawlRunner
from memlane.docsets.service import DocsetContext, refresh_stale_docsets
from memlane.local.compose import LocalStack
from memlane.ports import Fetcher

PRIVATE_NETWORK_HINT = (
    "to index docs served on this machine or your network, start memlane with --allow-private-network "
    "(memlane serve --allow-private-network, make run ARGS=--allow-private-network, memlane docs index URL "
    "--allow-private-network, or MEMLANE_ALLOW_PRIVATE_NETWORK=1)")


class LocalDocsets:
    def __init__(self, stack: LocalStack, *, allow_private_network: bool = False,
                 settings: DocsetSettings | None = None, fetcher: Fetcher | None = None) -> None:
        self.settings = settings or DocsetSettings()  # the host passes what it read (memlane.config.local)
        self.policy = (NetworkPolicy.private_network() if allow_private_network
                       else NetworkPolicy.public_only())
        self._owned_fetcher = None
        if fetcher is None:
            fetcher = self._owned_fetcher = SafeFetcher(
                policy=self.policy, limits=FetchLimits(max_bytes=self.settings.max_page_bytes))
        self.store = SqliteDocsetStore(stack.db)
        crawl = CrawlContext(svc=stack.services, store=self.store, fetcher=fetcher, settings=self.settings,
                             robots=RobotsCache(fetcher))
        self.runner = CrawlRunner(crawl, maintenance_interval_s=self.settings.maintenance_interval_s,
                                  on_refresh_due=self.refresh_stale)
        self.context = DocsetContext(crawl=crawl, policy=self.policy, dispatcher=self.runner,
                                     private_network_hint=None if allow_private_network else PRIVATE_NETWORK_HINT)

    def refresh_stale(self) -> object:
        return refresh_stale_docsets(self.context)

    def start(self) -> None:
        self.runner.start()

    def stop(self) -> None:
        self.runner.stop()
        if self._owned_fetcher is not None:
            self._owned_fetcher.close()
