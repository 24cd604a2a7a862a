"""Metrics on AWS: CloudWatch embedded metric format through Powertools. The handler flushes them
(functions/*: `@metrics.log_metrics`); the namespace is the composition's (FunctionSettings,
POWERTOOLS_METRICS_NAMESPACE), the service Powertools' own (POWERTOOLS_SERVICE_NAME)."""

from __future__ import annotations

from collections.abc import Collection

from aws_lambda_powertools import Metrics
from aws_lambda_powertools.metrics import MetricUnit

from memlane.observability import NAMESPACE


class PowertoolsMetrics:
    """`only`: the names to publish (None: all); the others are counted nowhere (lean observability)."""

    def __init__(self, metrics: Metrics | None = None, only: Collection[str] | None = None,
                 namespace: str = NAMESPACE) -> None:
        # Powertools keeps the metrics of one invocation in a set shared by every Metrics()
        # instance, so these land in the handler's flush. The namespace is named here too: past
        # 100 metrics Powertools flushes from add_metric itself, and a flush without one raises.
        self._metrics = metrics or Metrics(namespace=namespace)
        self._only = frozenset(only) if only is not None else None

    def count(self, name: str, value: int = 1) -> None:
        if self._only is None or name in self._only:
            self._metrics.add_metric(name=name, unit=MetricUnit.Count, value=value)
