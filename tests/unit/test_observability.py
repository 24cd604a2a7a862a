"""What memlane counts (memlane.observability), as the local composition records it."""

from __future__ import annotations

from dataclasses import replace

from fakes import FixedClock

from memlane import observability as o
from memlane.documents.forget import forget_expired
from memlane.domain.requests import MemoryIn, RecallIn
from memlane.recall.service import recall
from memlane.services.memory import save_memory


def test_saves_writes_recalls_cache_and_sweeps_are_counted(stack, who, hash_embedder):
    svc = stack.services = replace(stack.services, clock=FixedClock())
    counts = svc.metrics.counts
    # Given a save, the same content again, and a save while the embedder is down
    save_memory(svc, who, MemoryIn(content="The ferry leaves at seven from pier four."))
    save_memory(svc, who, MemoryIn(content="The ferry leaves at seven from pier four."))
    hash_embedder.fail_times = 1
    save_memory(svc, who, MemoryIn(content="Bring the blue cooler on the ferry."))
    # and the same recall twice, then a sweep
    for _ in range(2):
        recall(svc, who, RecallIn(query="when does the ferry leave"))
    forget_expired(svc)
    # Then each is counted once, under its name
    assert counts[o.MEMORY_SAVED] == 3 and counts[o.MEMORY_DUPLICATE] == 1
    assert counts[o.DOCUMENTS_WRITTEN] == 1 and counts[o.WRITES_DEFERRED] == 1 and counts[o.WRITES_FAILED] == 0
    assert (counts[o.RECALLS], counts[o.RECALL_CACHE_MISSES], counts[o.RECALL_CACHE_HITS]) == (2, 1, 1)
    assert counts[o.FORGET_SWEEPS] == 1 and counts[o.DOCUMENTS_FORGOTTEN] == 0


def test_the_stack_and_the_code_name_the_same_metrics_namespace():
    from infra import constants as c

    assert c.METRICS_NAMESPACE == o.NAMESPACE


def test_powertools_counts_past_its_buffer_without_a_namespace_in_the_environment(monkeypatch, capsys):
    # Given no POWERTOOLS_METRICS_NAMESPACE (a bench, `memlane invoke` or a test outside the stack)
    from memlane.adapters.aws.metrics import PowertoolsMetrics

    monkeypatch.delenv("POWERTOOLS_METRICS_NAMESPACE", raising=False)
    metrics = PowertoolsMetrics()
    try:
        # When more than Powertools' 100 buffered metrics are counted in one invocation
        for i in range(150):
            metrics.count(f"Count{i}")
        # Then Powertools flushed them itself, under memlane's namespace, instead of raising
        assert f'"Namespace": "{o.NAMESPACE}"' in capsys.readouterr().out
    finally:
        metrics._metrics.clear_metrics()


def test_lean_observability_publishes_only_the_metric_its_alarm_reads(monkeypatch):
    # Given a function of a stack with observability=lean (MEMLANE_METRICS=alarmed)
    from memlane.aws import compose

    monkeypatch.setenv("MEMLANE_TABLE", "t")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv(o.ENV_METRICS, "alarmed")
    metrics = compose.compose_aws(compose.AwsSettings.from_env(), compose.memlane_settings()).metrics
    try:
        # When it counts a save, a recall and a failed write
        for name in (o.MEMORY_SAVED, o.RECALLS, o.WRITES_FAILED):
            metrics.count(name)
        # Then only the failed write is published (CloudWatch bills every custom metric it receives)
        assert set(metrics._metrics.metric_set) == {o.WRITES_FAILED} == set(o.LEAN_ALARMED)
    finally:
        metrics._metrics.clear_metrics()
    monkeypatch.delenv(o.ENV_METRICS)
    every = compose.compose_aws(compose.AwsSettings.from_env(), compose.memlane_settings()).metrics
    try:
        every.count(o.RECALLS)
        assert o.RECALLS in every._metrics.metric_set
    finally:
        every._metrics.clear_metrics()
