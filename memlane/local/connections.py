"""Connection syncs in the embedded default: the server's periodic runner (memlane.local.periodic)
looks for due connections every TICK_SECONDS and syncs them one after the other (the local stand-in
for EventBridge Scheduler and the sync queue); "sync now", an OAuth callback and a webhook that
found a sync running wake it at once."""

from __future__ import annotations

from memlane.connections.sync import run_due
from memlane.local.periodic import PeriodicJob
from memlane.ports import Services

TICK_SECONDS = 60.0  # a connection is due every 15 minutes; a minute's lateness is fine


class LocalSyncRunner:
    def __init__(self, svc: Services, tick_seconds: float = TICK_SECONDS) -> None:
        self.svc = svc
        self.job = PeriodicJob("connections", tick_seconds, self.run_due)

    def run_due(self) -> object:
        return run_due(self.svc)

    def request_sync(self, org_id: str, connection_id: str) -> None:
        self.job.wake()

    def start(self) -> None:
        self.job.start()

    def stop(self) -> None:
        self.job.stop()
