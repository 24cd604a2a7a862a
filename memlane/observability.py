"""What memlane counts, in one place: the metric names the code emits and the alarms in
infra/constructs/observability.py watch. Every count goes through the `Metrics` port
(memlane.ports); `Services.metrics` is where a service finds it."""

from __future__ import annotations

import threading
from collections import Counter

# The CloudWatch namespace (the stack sets POWERTOOLS_METRICS_NAMESPACE to the same name, which
# memlane.config.aws.FunctionSettings reads; a handler run outside the stack, by `memlane invoke` or
# a test, still has one).
NAMESPACE = "memlane"

# Saves and recalls
MEMORY_SAVED = "MemorySaved"  # a save accepted: written in the request, queued, or a duplicate
MEMORY_DUPLICATE = "MemoryDuplicate"
RECALLS = "Recalls"
RECALL_CACHE_HITS = "RecallCacheHits"
RECALL_CACHE_MISSES = "RecallCacheMisses"
# The write path (memlane.documents.writer)
DOCUMENTS_WRITTEN = "DocumentsWritten"
WRITES_DEFERRED = "WritesDeferred"  # failed transiently: queued for a retry
WRITES_FAILED = "WritesFailed"  # failed for good: the document says `failed`
INGESTION_FAILED = "IngestionFailed"  # the workflow gave up on a document (MarkFailed)
# Documentation crawls and lifecycle
PAGES_CRAWLED = "PagesCrawled"
PAGE_ERRORS = "PageErrors"
DOCUMENTS_FORGOTTEN = "DocumentsForgotten"
# The memories around a written or removed one could not be indexed again (memlane.documents.writer:
# a model or a grant refused, the index down): they keep a context that is out of date, and on a
# removal a forgotten memory's words stay in their entries until the next write next to them.
CONTEXT_REBUILDS_FAILED = "ContextRebuildsFailed"
LLM_CALLS = "LLMCalls"
LLM_INPUT_TOKENS = "LLMInputTokens"
LLM_OUTPUT_TOKENS = "LLMOutputTokens"
LLM_MALFORMED = "LLMMalformedAnswers"  # answers refused by their schema (retried once, then dropped)
FACTS_EXTRACTED = "FactsExtracted"
EXTRACTIONS_FAILED = "ExtractionsFailed"
FORGET_SWEEPS = "ForgetSweeps"

# What the alarms watch (a sum over the alarm period above zero is worth a look).
ALARMED = (WRITES_FAILED, INGESTION_FAILED, PAGE_ERRORS, CONTEXT_REBUILDS_FAILED)
# With lean observability (the stack's `observability=lean`) one of them has an alarm, and the functions
# publish only it (MEMLANE_METRICS=alarmed): CloudWatch bills each custom metric it receives.
LEAN_ALARMED = (WRITES_FAILED,)
ENV_METRICS = "MEMLANE_METRICS"  # "all" (default) | "alarmed"


class NoMetrics:
    def count(self, name: str, value: int = 1) -> None:
        return None


class CountingMetrics:
    """The local server's counters, since it started (GET /health could show them; tests read them)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.counts: Counter[str] = Counter()

    def count(self, name: str, value: int = 1) -> None:
        with self._lock:
            self.counts[name] += value
