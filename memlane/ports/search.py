"""The search index: k-NN + BM25 over chunks, and the scope every search runs in."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

from memlane.domain.facts import Kind
from memlane.domain.models import KEYPHRASE_LABEL, Chunk, ContentType, filter_labels

# What an index holds as the kind of a chunk written before it held kinds (an older memlane).
UNKNOWN_KIND = ""


@dataclass(frozen=True)
class RecallFilters:
    content_types: tuple[ContentType, ...] = ()
    created_after: datetime | None = None
    tags: tuple[str, ...] = ()  # a document matches when it carries any of these tags or keyphrases
    keyphrases: tuple[str, ...] = ()
    include_superseded: bool = False  # older versions of a document are hidden unless asked for
    # memlane.domain.facts kinds ("memory", "message", "fact"): a chunk matches when its document is
    # of one of them. Chunks indexed before the index held a kind (UNKNOWN_KIND) match every kind
    # filter: recall checks the document's own kind after ranking, and `memlane reindex` gives them one.
    kinds: tuple[str, ...] = ()


    def labels(self) -> tuple[str, ...]:
        """The filter labels wanted (memlane.domain.models.filter_labels): any of them matches."""
        return tuple(filter_labels(self.tags, self.keyphrases))


@dataclass(frozen=True)
class SearchScope:
    """Who may see what. Built by services from the authenticated key, never from a body; every
    index adapter applies it inside both legs."""

    organization_id: str
    project_ids: tuple[str, ...]  # never empty: "all projects" is expanded by the service
    filters: RecallFilters = field(default_factory=RecallFilters)
    now: datetime | None = None  # documents whose forget_after is before this are invisible
    # recall's `as_of`: chunks created after it are left out (inclusive bound). Which version of a
    # document was current then is decided by recall: the index knows a version is superseded, not
    # since when, so `as_of` searches with include_superseded.
    created_until: datetime | None = None


@dataclass(frozen=True)
class Candidate:
    """One chunk returned by one search leg, with that leg's raw score."""

    chunk_id: str
    document_id: str
    chunk_index: int
    score: float
    created_at: datetime
    # The chunk's ContentType value where the index holds it (the embedded one does): recall then
    # need not read the chunk's record to learn whether it is code. None: unknown, read it.
    content_type: str | None = None


@dataclass(frozen=True)
class LegResults:
    vector: list[Candidate]
    text: list[Candidate]


@dataclass(frozen=True)
class IndexHoldings:
    """What the search index still holds of one document (a deletion receipt reads this)."""

    text: int  # entries the text (BM25) leg can match
    vector: int  # vectors the k-NN leg can return


@dataclass(frozen=True)
class IndexedChunk:
    chunk: Chunk
    vector: Sequence[float]
    # The text of the memories saved around this one (memlane.documents.contextual): matched by the text
    # leg at a lower weight than the chunk's own words; never returned by recall.
    context: str = ""
    # Words for the text leg only, indexed as part of the chunk's body on every host: for code, the
    # words of its identifiers (memlane.ingest.identifiers: `getUserName` → "get user name").
    # Never returned, never embedded.
    identifiers: str = ""
    # The kind of the chunk's document (memlane.domain.facts.kind_of), for RecallFilters.kinds; the
    # write path sets it from the document, so a fact is filtered as one inside both legs.
    kind: Kind = "memory"

    def body(self) -> str:
        """What the text leg indexes as the chunk's body: its content, then its identifiers' words,
        then its document's tags (a query that is a tag word, "home", finds the memories filed
        under it on every host; keyphrases are not added: they are the content's own words)."""
        tags = [t for t in self.chunk.tags if not t.startswith(KEYPHRASE_LABEL)]
        extra = "\n".join(part for part in (self.identifiers, " ".join(tags)) if part)
        return f"{self.chunk.content}\n{extra}" if extra else self.chunk.content


class SearchIndex(Protocol):
    """k-NN + BM25 over chunks. Engines return candidates with raw scores; memlane ranks them."""

    # What answers both legs, as GET /health names it (memlane check says what it tests there):
    # "embedded" | "opensearch" | "opensearch-serverless" | "s3vectors"
    @property
    def backend(self) -> str: ...

    def upsert(self, embedder_id: str, items: Sequence[IndexedChunk]) -> None: ...
    def delete_document(self, org_id: str, document_id: str) -> None: ...
    def set_superseded(self, org_id: str, document_id: str, superseded: bool) -> None: ...
    def search(
        self, scope: SearchScope, query_text: str, query_vector: Sequence[float] | None, k: int,
        *, complete: bool = True,
    ) -> LegResults:
        """Both legs under `scope`, each candidate scored on both (the fusion is then the spec's
        formula for every candidate, with no zero standing in for "outside the other leg's top k");
        with `complete` False, each leg's own top k only:

        - `vector`: the k nearest in-scope chunks by cosine, then every chunk of `text` not among them,
          with its cosine (empty when `query_vector` is None); best first.
        - `text`: the k best BM25 in-scope chunks holding a query term, then every chunk of `vector`'s
          k nearest not among them that holds a query term, with its BM25 (and `evidence` where the
          host has one); best first. No chunk with a BM25 of 0 is in `text`.

        A filled-in score is the one the leg would have given that chunk had k been larger (the same
        statistics, scope and filters). Only chunks of the scope's organization, in scope."""
        ...

    def document_ids(self, org_id: str | None = None) -> set[str]: ...
    def holdings(self, document_id: str, org_id: str | None = None) -> IndexHoldings:
        """Read from the index itself, not from what memlane believes it wrote: in any organization (a
        document id is unique), or in `org_id`'s part of the index where the host keeps organizations
        apart (S3 Vectors: an index per organization, so a receipt reads one, not every one)."""
        ...
