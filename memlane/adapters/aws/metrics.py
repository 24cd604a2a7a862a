"""Metrics on AWS: CloudWatch embedded metric format through Powertools. The handler flushes them
(functions/*: `@metrics.log_metrics`); namespace and service come from the stack's environment
(POWERTOOLS_METRICS_NAMESPACE, POWERTOOLS_SERVICE_NAME)."""

from __future__ import annotations

from aws_lambda_powertools import Metrics
from aws_lambda_powertools.metrics import MetricUnit

from memlane.observability import metrics_namespace


class PowertoolsMetrics:
    def __init__(self, metrics: Metrics | None = None) -> None:
        # Powertools keeps the metrics of one invocation in a set shared by every Metrics()
        # instance, so these land in the handler's flush. The namespace is named here too: past
        # 100 metrics Powertools flushes from add_metric itself, and a flush without one raises.
        self._metrics = metrics or Metrics(namespace=metrics_namespace())

    def count(self, name: str, value: int = 1) -> None:
        self._metrics.add_metric(name=name, unit=MetricUnit.Count, value=value)
