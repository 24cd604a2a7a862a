"""What recall reads in each candidate's own text, beside the two legs' scores: the words of the
question a chunk holds (the fusion's coverage, memlane.recall.coverage), exact matches, a title or a
chunk holding the whole question (strong), a name the question gives and the chunk lacks (at most
weak: memlane.recall.names), and the tags a memory is filed under. memlane.recall.pipeline reads the
candidates' records once and passes them here; nothing here searches or ranks."""

from __future__ import annotations

from memlane.domain.models import KEYPHRASE_LABEL, Chunk
from memlane.domain.tuning import FusionWeights
from memlane.ports import DocumentStore, LegResults, SearchScope
from memlane.recall import relevance as rel
from memlane.recall.coverage import coverage, question_stems
from memlane.recall.fusion import ScoredChunk
from memlane.recall.names import named_terms, names_all


def given_tags(ch: Chunk) -> list[str]:
    """The tags a person or client gave a chunk's document (its labels without the keyphrases)."""
    return [t for t in ch.tags if not t.startswith(KEYPHRASE_LABEL)]


def filed_under(query: str, records: dict[str, Chunk]) -> list[str]:
    """The candidates whose given tags hold every content word of the query ("home", "travel plans"
    asked of memories tagged home, or travel and plans): a tag word asked as a query finds what was
    filed under it (issue 36)."""
    words = rel.content_words(query)
    if not words:
        return []
    return [cid for cid, ch in records.items()
            if (tags := {w for t in given_tags(ch) for w in rel.content_words(t)}) and all(w in tags for w in words)]


def own_text(ch: Chunk) -> str:
    """A chunk's own words as the text leg matched them: its title, section path and text."""
    return "\n".join((ch.title, *ch.heading_path, ch.content))


def own_coverage(query: str, weights: FusionWeights, exact: bool, legs: LegResults,
                 records: dict[str, Chunk]) -> dict[str, float]:
    """The share of the question's content words each text-leg candidate's own words hold
    (memlane.recall.coverage), read once for the fusion and the whole-question rule (_set_exact): when the
    fusion scales by it, or exact matches count and the question has two words or more."""
    stems = question_stems(query)
    if not records or not (weights.text_coverage > 0 or (exact and len(stems) >= WHOLE_QUESTION_WORDS)):
        return {}
    return {c.chunk_id: coverage(own_text(ch), stems) for c in legs.text
            if c.score > 0 and (ch := records.get(c.chunk_id)) is not None}


def fusion_coverage(store: DocumentStore, scope: SearchScope, query: str, weights: FusionWeights,
                    own: dict[str, float], records: dict[str, Chunk], code: frozenset[str]) -> dict[str, float] | None:
    """The share of the question's content words each text-leg candidate holds in what the text leg
    matched (its own words and its given tags), when the fusion scales the word share by it. Not for
    code (its share is by its own evidence) nor for a message of a conversation: its index entry also
    matches its neighbours' words (memlane.documents.contextual), which its record does not hold."""
    prose = [cid for cid in own if cid not in code]
    if weights.text_coverage <= 0 or not prose:
        return None
    threads = store.conversation_messages(scope.organization_id, list({records[cid].document_id for cid in prose}))
    stems = question_stems(query)
    out = {}
    for cid in prose:
        ch = records[cid]
        if ch.document_id in threads:
            continue
        tags = given_tags(ch)
        out[cid] = own[cid] if own[cid] >= 1.0 or not tags else coverage(own_text(ch) + "\n" + "\n".join(tags), stems)
    return out


def set_relevance(query: str, reads_text: bool, fused: list[ScoredChunk], c: rel.Calibration,
                  records: dict[str, Chunk], background: rel.Background | None, own: dict[str, float]) -> None:
    """Every fused chunk's relevance (memlane.recall.relevance) from its raw evidence; where the text leg
    ran on a question (`reads_text`), also what its text says: exact matches, titles and chunks holding the
    whole question (strong), names the question gives that it lacks (at most weak)."""
    terms = rel.query_terms(query)
    for sc in fused:
        sc.relevance = rel.relevance(sc.vector_score, sc.bm25, terms, False, c, code=sc.code, background=background,
                                     document_id=sc.document_id)
    # Exact matches and names are read in the chunk's text: only where the text leg ran on a question
    # (a whole document as the query names everything).
    if not reads_text:
        return
    _set_exact(query, fused, c, records, own)
    _hold_unnamed(query, fused, c, records)


def _set_exact(query: str, fused: list[ScoredChunk], c: rel.Calibration, records: dict[str, Chunk],
               own: dict[str, float]) -> None:
    """Exact matches (a distinctive term, or every content word), and the chunks that are at least
    `strong`: a title that holds every content word (memlane.recall.relevance `titled`), or a chunk whose
    own words (title, section path, text) hold every content word of a question of two or more
    (memlane.recall.coverage, by stem: "parked" holds "parking"). Only the chunks the text leg found."""
    distinctive, words = rel.distinctive_terms(query), rel.content_words(query)
    if not (distinctive or words):
        return
    whole = len(question_stems(query)) >= WHOLE_QUESTION_WORDS
    for sc in fused:
        ch = records.get(sc.chunk_id) if sc.bm25 > 0 else None
        if ch is None:
            continue
        if rel.titled(ch.title or "", words):
            sc.titled = sc.exact = True
            sc.relevance = max(sc.relevance, c.exact_match, c.strong)
        elif whole and own.get(sc.chunk_id, 0.0) >= 1.0:
            sc.whole = sc.exact = True
            sc.relevance = max(sc.relevance, c.exact_match, c.strong)
        # what the text leg matched: the title, the text and the given tags (IndexedChunk.body)
        elif sc.relevance < c.exact_match and rel.exact_match(
                f"{ch.title}\n{ch.content}\n{' '.join(given_tags(ch))}", distinctive, words):
            sc.exact = True
            sc.relevance = max(sc.relevance, c.exact_match)


# A chunk holding every content word of a question of at least this many is a strong match: one word
# alone ("passport") is a topic, two or more together ("passport expiry", "Pepper vet night") are the
# question. On the recall suite it made the personal notes' answer first and strong 0.05 more often and
# no unanswerable or nonsense question strong (BENCHMARKS.md, "Recall that answers, fourth round").
WHOLE_QUESTION_WORDS = 2


def _hold_unnamed(query: str, fused: list[ScoredChunk], c: rel.Calibration, records: dict[str, Chunk]) -> None:
    """A chunk of prose lacking a name the question gives is at most `named_cap` (memlane.recall.names).
    One the text leg did not find holds no word of the question, so no name either; one it found is
    read. Code is left alone: it spells what it handles as identifiers (`_tkinter`), which a question
    in prose names as words ("Tcl")."""
    names = named_terms(query)
    if not names:
        return
    cap = c.named_cap
    for sc in fused:
        if sc.code:
            continue
        ch = records.get(sc.chunk_id) if sc.bm25 > 0 else None
        sc.named = ch is not None and names_all(f"{ch.title}\n{ch.content}", names)
        if not sc.named:
            sc.relevance = min(sc.relevance, cap)
