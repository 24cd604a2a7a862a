"""Connection syncs in the embedded default: the server's periodic runner (memlane.local.periodic)
looks for due connections every TICK_SECONDS and syncs them one after the other (the local stand-in
for EventBridge Scheduler and the sync queue); "sync now", an OAuth callback and a webhook that
found a sync running wake it at once."""

from __future__ import annotations

from collections.abc import Callable

from memlane.connections.sync import run_due
from memlane.local.periodic import PeriodicJob
from memlane.ports import Services

TICK_SECONDS = 60.0  # a connection is due every 15 minutes; a minute's lateness is fine


class LocalSyncRunner:
    """`services`: the Services it syncs with, or a callable answering them once they exist (the
    runner is the connections' dispatcher, so it is made before the Services that hold it)."""

    def __init__(self, services: Services | Callable[[], Services], tick_seconds: float = TICK_SECONDS) -> None:
        self._services = services if callable(services) else (lambda: services)
        self.job = PeriodicJob("connections", tick_seconds, self.run_due)

    @property
    def svc(self) -> Services:
        return self._services()

    def run_due(self) -> object:
        return run_due(self.svc)

    def request_sync(self, org_id: str, connection_id: str) -> None:
        self.job.wake()

    def start(self) -> None:
        self.job.start()

    def stop(self) -> None:
        self.job.stop()
