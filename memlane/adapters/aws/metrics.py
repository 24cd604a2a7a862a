"""Metrics on AWS: CloudWatch embedded metric format through Powertools. The handler flushes them
(functions/*: `@metrics.log_metrics`); the namespace is the composition's (FunctionSettings,
POWERTOOLS_METRICS_NAMESPACE), the service Powertools' own (POWERTOOLS_SERVICE_NAME)."""

from __future__ import annotations

from aws_lambda_powertools import Metrics
from aws_lambda_powertools.metrics import MetricUnit

from memlane.observability import NAMESPACE


class PowertoolsMetrics:
    def __init__(self, metrics: Metrics | None = None, namespace: str = NAMESPACE) -> None:
        # Powertools keeps the metrics of one invocation in a set shared by every Metrics()
        # instance, so these land in the handler's flush. The namespace is named here too: past
        # 100 metrics Powertools flushes from add_metric itself, and a flush without one raises.
        self._metrics = metrics or Metrics(namespace=namespace)

    def count(self, name: str, value: int = 1) -> None:
        self._metrics.add_metric(name=name, unit=MetricUnit.Count, value=value)
