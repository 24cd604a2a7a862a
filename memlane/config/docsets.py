"""`DocsetSettings`: the documentation sets' part of the configuration, crawl and retrieval, read
once where a host composes them (the local runtime, the AWS docset context) and passed inward (the
records: memlane.domain.docsets). Their fusion's defaults are memlane.domain.tuning.DOCSET_FUSION."""

from __future__ import annotations

import dataclasses

from pydantic_settings import SettingsConfigDict

from memlane.config.variables import Section, SettingsPart, variable
from memlane.domain.tuning import DOCSET_FUSION, FusionWeights


class DocsetSettings(SettingsPart):
    """Crawl and retrieval settings (see the module's docstring)."""

    model_config = SettingsConfigDict(frozen=True)

    per_host_concurrency: int = variable(
        "MEMLANE_CRAWL_CONCURRENCY", 4, ge=1, unit="requests", section=Section.DOCSETS,
        doc="requests at a time to one host")
    fetch_workers: int = variable(
        "MEMLANE_CRAWL_WORKERS", 4, ge=1, unit="pages", section=Section.DOCSETS,
        doc="pages fetched at once by a crawl")
    max_pages: int = variable(
        "MEMLANE_CRAWL_MAX_PAGES", 5000, ge=1, unit="pages", section=Section.DOCSETS,
        doc="pages per documentation set")
    refresh_interval_hours: float = variable(
        "MEMLANE_DOCSET_REFRESH_HOURS", 24.0, gt=0, unit="hours", section=Section.DOCSETS,
        doc="how old a page may be before it counts as stale and the local server's periodic refresh "
            "fetches it again")
    # Docs are chunked like other content by default; see BENCHMARKS.md (docsets) for the measurements.
    chunk_max_tokens: int = variable(
        "MEMLANE_DOCSET_CHUNK_TOKENS", 512, ge=1, unit="tokens", section=Section.DOCSETS,
        doc="how long a chunk of a page may be")
    chunk_overlap_tokens: int = variable(
        "MEMLANE_DOCSET_CHUNK_OVERLAP", 50, ge=0, unit="tokens", section=Section.DOCSETS,
        doc="how much consecutive chunks of a page overlap")
    weight_vector: float = variable(
        "MEMLANE_DOCSET_WEIGHT_VECTOR", DOCSET_FUSION.vector, ge=0, section=Section.DOCSETS,
        doc="documentation's fusion weight of meaning")
    weight_text: float = variable(
        "MEMLANE_DOCSET_WEIGHT_TEXT", DOCSET_FUSION.text, ge=0, section=Section.DOCSETS,
        doc="documentation's fusion weight of words")
    weight_recency: float = variable(
        "MEMLANE_DOCSET_WEIGHT_RECENCY", DOCSET_FUSION.recency, ge=0, section=Section.DOCSETS,
        doc="documentation's fusion weight of recency (none: documentation does not age)")
    weight_support: float = variable(
        "MEMLANE_DOCSET_WEIGHT_SUPPORT", DOCSET_FUSION.support, ge=0, section=Section.DOCSETS,
        doc="page support: the share of its next best chunks' scores a page's best chunk gains")
    support_chunks: int = variable(
        "MEMLANE_DOCSET_SUPPORT_CHUNKS", DOCSET_FUSION.support_chunks, ge=0, unit="chunks", section=Section.DOCSETS,
        doc="page support: how many of a page's next best chunks count")

    # ------------------------------------------------------------------ not variables
    max_page_bytes: int = 5 * 1024 * 1024
    embed_batch_chunks: int = 128
    stuck_after_s: int = 300
    max_attempts: int = 4
    retry_base_s: float = 5.0
    maintenance_interval_s: float = 30.0  # how often stuck pages and due refreshes are looked for
    default_max_age_hours: float = 24.0
    wait_for_seed_timeout_s: float = 25.0  # under API Gateway's 29 s
    # A page whose main content is mostly link text (a table of contents, a generated index) is
    # followed for its links but not indexed: its chunks would match every query and answer none.
    navigation_link_density: float = 0.6
    candidate_k: int = 100

    @property
    def fusion(self) -> FusionWeights:
        """memlane's fusion function with documentation's weights (DOCSET_FUSION, with the variables')."""
        return dataclasses.replace(DOCSET_FUSION, vector=self.weight_vector, text=self.weight_text,
                                   recency=self.weight_recency, support=self.weight_support,
                                   support_chunks=self.support_chunks)
