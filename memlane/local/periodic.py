"""Run a job every N seconds in a daemon thread (the local stand-in for EventBridge Scheduler).
The first run happens at start, so a job missed while the server was down is caught up; `wake()`
runs it at once (a connection's "sync now")."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)


class PeriodicJob:
    def __init__(self, name: str, every_seconds: float, job: Callable[[], object]) -> None:
        self.name = name
        self.every_seconds = every_seconds
        self.job = job
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self.runs = 0

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=f"memlane-{self.name}", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            self._wake.clear()  # a wake from now on runs the job again after this run
            try:
                self.job()
            except Exception:  # a failing run must not end the schedule
                log.exception("periodic job %s failed", self.name)
            self.runs += 1
            self._wake.wait(self.every_seconds)

    def wake(self) -> None:
        """Run the job now (or right after the run in progress)."""
        self._wake.set()

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)
