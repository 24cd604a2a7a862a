"""Docset settings: crawl and retrieval, read once at the edge (the records: memlane.domain.docsets)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from memlane.config import env_float, env_int
from memlane.domain.tuning import FusionWeights

DOCSET_FUSION = FusionWeights(vector=0.8, text=0.2, recency=0.0, support=0.2, support_chunks=2, complete_legs=False)


@dataclass(frozen=True)
class DocsetSettings:
    """Crawl and retrieval settings, read once at the edge (`from_env`) and passed inward."""

    per_host_concurrency: int = 4
    fetch_workers: int = 4
    max_pages: int = 5000
    max_page_bytes: int = 5 * 1024 * 1024
    # Docs are chunked like other content by default; see BENCHMARKS.md (docsets) for the measurements.
    chunk_max_tokens: int = 512
    chunk_overlap_tokens: int = 50
    embed_batch_chunks: int = 128
    stuck_after_s: int = 300
    max_attempts: int = 4
    retry_base_s: float = 5.0
    refresh_interval_hours: float = 24.0  # the local server's periodic refresh of stale docsets
    maintenance_interval_s: float = 30.0  # how often stuck pages and due refreshes are looked for
    default_max_age_hours: float = 24.0
    wait_for_seed_timeout_s: float = 25.0  # under API Gateway's 29 s
    # A page whose main content is mostly link text (a table of contents, a generated index) is
    # followed for its links but not indexed: its chunks would match every query and answer none.
    navigation_link_density: float = 0.6
    candidate_k: int = 100
    # memlane's fusion function with docset weights: top candidates' cosines sit in a narrow band
    # while max-normalised BM25 spans 0-1, so at the memory defaults (0.6/0.4) the keyword leg
    # decides most orderings; 0.8/0.2 measured best on the docs eval (BENCHMARKS.md, docsets).
    # No recency bonus: documentation does not age, and a refresh must not reorder pages by when
    # they happened to be fetched. Page evidence: a page's best chunk gains 0.2 × the scores of the
    # page's next two best candidates, so a page about the topic beats a page that mentions it once.
    fusion: FusionWeights = field(default_factory=lambda: DOCSET_FUSION)

    @classmethod
    def from_env(cls, env: Mapping[str, str], **overrides: object) -> DocsetSettings:
        """From the host's environment (`env`: the local runtime and the AWS composition pass
        os.environ, once); a value that is not a number is a ConfigurationError naming it."""
        def _int(name: str, default: int) -> int:
            return env_int(env, name, default, minimum=0)

        def _float(name: str, default: float) -> float:
            return env_float(env, name, default)

        values: dict[str, object] = {
            "per_host_concurrency": _int("MEMLANE_CRAWL_CONCURRENCY", cls.per_host_concurrency),
            "fetch_workers": _int("MEMLANE_CRAWL_WORKERS", cls.fetch_workers),
            "max_pages": _int("MEMLANE_CRAWL_MAX_PAGES", cls.max_pages),
            "refresh_interval_hours": _float("MEMLANE_DOCSET_REFRESH_HOURS", cls.refresh_interval_hours),
            "chunk_max_tokens": _int("MEMLANE_DOCSET_CHUNK_TOKENS", cls.chunk_max_tokens),
            "chunk_overlap_tokens": _int("MEMLANE_DOCSET_CHUNK_OVERLAP", cls.chunk_overlap_tokens),
        }
        weights = FusionWeights(
            vector=_float("MEMLANE_DOCSET_WEIGHT_VECTOR", DOCSET_FUSION.vector),
            text=_float("MEMLANE_DOCSET_WEIGHT_TEXT", DOCSET_FUSION.text),
            recency=_float("MEMLANE_DOCSET_WEIGHT_RECENCY", DOCSET_FUSION.recency),
            support=_float("MEMLANE_DOCSET_WEIGHT_SUPPORT", DOCSET_FUSION.support),
            support_chunks=_int("MEMLANE_DOCSET_SUPPORT_CHUNKS", DOCSET_FUSION.support_chunks),
            complete_legs=DOCSET_FUSION.complete_legs,
        )
        values["fusion"] = weights
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)  # type: ignore[arg-type]
