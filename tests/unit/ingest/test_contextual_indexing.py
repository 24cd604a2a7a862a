"""Contextual indexing (memlane.documents.contextual through the one write path): a short message's index
entry carries the messages just before and after it in its conversation (conversation_id, ordered by
message_index), as a text field and in its vector; entries follow their neighbours' saves, updates
and deletions. A memory without conversation_id is indexed alone, however close in time it was
saved. Hashing embedder: the mechanism, not the model."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import numpy as np
import pytest
from fakes import FixedClock

from memlane.documents.writer import embedding_text
from memlane.domain.models import chunk_id_for
from memlane.domain.requests import BulkMemoriesIn, MemoryIn
from memlane.ports import RecallFilters, SearchScope
from memlane.services.bulk import save_memories
from memlane.services.memory import delete_document, save_memory

T0 = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
ASK = "Ann: Did you finish the pottery class you signed up for?"
ANSWER = "Bo: Yes, last Friday! I made a black and white bowl."
LATER = "Ann: The weather has been lovely this week."


@pytest.fixture
def clock(stack):
    c = FixedClock(T0)
    stack.services = replace(stack.services, clock=c)
    return c


@pytest.fixture
def project(stack, who):
    from memlane.domain.models import Project

    return stack.metadata.create_project(Project(organization_id=who.organization_id, name="chat", slug="chat")).id


def save(stack, who, project, content, clock, seconds=20, conversation="chat-1", index=None):
    clock.advance(seconds=seconds)
    out = save_memory(stack.services, who, MemoryIn(content=content, title="chat", project_id=project,
                                                    conversation_id=conversation, message_index=index))
    assert out.status == "ready"
    assert out.conversation_id == conversation
    return out.id


def text_hits(stack, who, project, query):
    scope = SearchScope(who.organization_id, (project,), RecallFilters(), now=stack.services.clock.now())
    return list(dict.fromkeys(c.document_id for c in stack.index.search(scope, query, None, 50).text))


def stored_vector(stack, doc_id):
    row = stack.db.connection().execute(
        "SELECT vector FROM search_rows WHERE chunk_id = ?", (chunk_id_for(doc_id, 0),)
    ).fetchone()
    return np.frombuffer(row["vector"], dtype=np.float32)


def expected_vector(stack, who, doc_id, before="", after=""):
    """The memory's own embedding plus its window's, normalised."""
    emb = stack.services.embedder
    chunk = stack.metadata.get_chunks(who.organization_id, doc_id)[0]
    own = embedding_text(chunk)
    window = "\n".join(t for t in (before, own, after) if t)
    v = np.asarray(emb.embed_documents([own])[0]) + np.asarray(emb.embed_documents([window])[0])
    return v / np.linalg.norm(v)


def test_a_turn_is_indexed_with_the_turns_around_it(stack, who, project, clock):
    # Given three turns saved one after another, the answer never naming what it answers
    ask = save(stack, who, project, ASK, clock)
    answer = save(stack, who, project, ANSWER, clock)
    later = save(stack, who, project, LATER, clock)
    # When the text leg looks for what the question asked
    hits = text_hits(stack, who, project, "pottery class")
    # Then the answer is found through its context, below the turn that says it
    assert hits[:2] == [ask, answer]
    # and the turns on both sides are found by the answer's words (the question's "after" side was
    # added when the answer came)
    hits = text_hits(stack, who, project, "bowl")
    assert hits[0] == answer and set(hits[1:]) == {ask, later}
    # and each vector mixes its own embedding with its window's
    assert stored_vector(stack, answer) == pytest.approx(
        expected_vector(stack, who, answer, before=ASK, after=LATER), abs=1e-6
    )
    assert stored_vector(stack, ask) == pytest.approx(expected_vector(stack, who, ask, after=ANSWER), abs=1e-6)
    # and recall returns the memory as saved, never its context
    chunk = stack.metadata.get_chunks(who.organization_id, answer)[0]
    assert chunk.content == ANSWER and later in text_hits(stack, who, project, "weather")


def test_notes_saved_seconds_apart_without_a_conversation_are_indexed_alone(stack, who, project, clock):
    # Given two notes saved ten seconds apart, with no conversation_id
    ask = save(stack, who, project, ASK, clock, seconds=10, conversation=None)
    answer = save(stack, who, project, ANSWER, clock, seconds=10, conversation=None)
    # Then neither carries the other, in the text leg or the vector
    assert text_hits(stack, who, project, "pottery") == [ask]
    assert text_hits(stack, who, project, "bowl") == [answer]
    emb = stack.services.embedder
    own = embedding_text(stack.metadata.get_chunks(who.organization_id, answer)[0])
    assert stored_vector(stack, answer) == pytest.approx(np.asarray(emb.embed_documents([own])[0]), abs=1e-6)


def test_two_conversations_saved_interleaved_never_carry_each_other(stack, who, project, clock):
    # Given the turns of two conversations saved alternately, seconds apart
    ask = save(stack, who, project, ASK, clock, conversation="a")
    other = save(stack, who, project, LATER, clock, conversation="b")
    answer = save(stack, who, project, ANSWER, clock, conversation="a")
    # Then the answer carries its own conversation's question, not the turn saved between them
    assert text_hits(stack, who, project, "pottery") == [ask, answer]
    assert text_hits(stack, who, project, "weather") == [other]


def test_a_pause_does_not_end_a_conversation_and_message_index_orders_it(stack, who, project, clock):
    # Given the answer (index 1) saved first and the question (index 0) the next day
    answer = save(stack, who, project, ANSWER, clock, index=1)
    ask = save(stack, who, project, ASK, clock, seconds=86_400, index=0)
    # Then the answer carries the question before it (the message order, not the save order)
    assert text_hits(stack, who, project, "pottery") == [ask, answer]
    assert stored_vector(stack, answer) == pytest.approx(expected_vector(stack, who, answer, before=ASK), abs=1e-6)


def test_deleting_a_turn_takes_its_words_out_of_its_neighbours_entries(stack, who, project, clock):
    # Given three turns, the middle one deleted
    ask = save(stack, who, project, ASK, clock)
    answer = save(stack, who, project, ANSWER, clock)
    later = save(stack, who, project, LATER, clock)
    delete_document(stack.services, who, answer)
    # Then no entry matches its words any more, and its neighbours now carry each other
    assert text_hits(stack, who, project, "bowl") == []
    assert text_hits(stack, who, project, "weather")[:2] == [later, ask]
    assert stored_vector(stack, later) == pytest.approx(expected_vector(stack, who, later, before=ASK), abs=1e-6)


def test_an_updated_turn_leaves_its_neighbours_context(stack, who, project, clock):
    # Given an answer and the turn after it, then the answer replaced by a new version
    answer = save(stack, who, project, ANSWER, clock)
    later = save(stack, who, project, LATER, clock)
    clock.advance(seconds=7_200)
    out = save_memory(
        stack.services,
        who,
        MemoryIn(content="Bo: I made a green vase.", title="chat", project_id=project, updates_memory_id=answer),
    )
    # Then the new version keeps the message's place in the conversation
    assert (out.conversation_id, out.message_index) == ("chat-1", 0)
    # and the old words find nothing (the old version is hidden and no longer anyone's context):
    # the turn after it carries the new version instead
    assert text_hits(stack, who, project, "bowl") == []
    assert text_hits(stack, who, project, "vase") == [out.id, later]
    assert stored_vector(stack, later) == pytest.approx(
        expected_vector(stack, who, later, before="Bo: I made a green vase."), abs=1e-6
    )


def test_long_documents_and_documentation_pages_are_indexed_alone(stack, who, project, clock):
    # Given a long document (several chunks) saved between two turns
    ask = save(stack, who, project, ASK, clock)
    long_text = "\n\n".join(f"Section {i}: " + " ".join(f"kiln{i} glaze{j}" for j in range(300)) for i in range(3))
    long_doc = save(stack, who, project, long_text, clock)
    answer = save(stack, who, project, ANSWER, clock)
    # Then the long document neither carries nor is carried
    assert text_hits(stack, who, project, "pottery") == [ask]
    assert text_hits(stack, who, project, "kiln0") == [long_doc]
    assert text_hits(stack, who, project, "bowl") == [answer]


def test_a_bulk_save_gives_each_turn_its_neighbours_in_one_embedding_call(stack, who, project, clock, hash_embedder):
    # Given three turns saved in one bulk request (each stamped when it is stored, as a real clock does)
    class Ticking(FixedClock):
        def now(self):
            self.advance(milliseconds=1)
            return self.current

    stack.services = replace(stack.services, clock=Ticking(T0))
    calls = hash_embedder.calls
    items = [MemoryIn(content=c, title="chat", project_id=project, conversation_id="bulk") for c in (ASK, ANSWER, LATER)]
    outcomes = save_memories(stack.services, who, BulkMemoriesIn(items=items))
    ids = [o.saved.id for o in outcomes]
    # Then the batch was embedded once (own texts and windows together)
    assert hash_embedder.calls == calls + 1
    # and the middle turn carries both others
    assert text_hits(stack, who, project, "pottery")[:2] == [ids[0], ids[1]]
    assert text_hits(stack, who, project, "weather")[:2] == [ids[2], ids[1]]


@pytest.fixture
def stack_with(tmp_path, hash_embedder):
    """A local stack with other context settings, its organization, a project and a fixed clock."""
    from memlane.config import Settings
    from memlane.domain.models import Project
    from memlane.domain.principal import Principal
    from memlane.ingest.summarize import LocalSummarizer
    from memlane.local.compose import build_local
    from memlane.services.keys import ensure_organization

    stacks = []

    def make(**settings):
        st = build_local(
            Settings(data_dir=tmp_path / f"s{len(stacks)}", **settings), embedder=hash_embedder,
            summarizer=LocalSummarizer(),
        )
        stacks.append(st)
        org, _ = ensure_organization(st.metadata, "acme")
        me = Principal(organization_id=org.id, key_id="k")
        project = st.metadata.create_project(Project(organization_id=org.id, name="chat", slug="chat")).id
        clock = FixedClock(T0)
        st.services = replace(st.services, clock=clock)
        return st, me, project, clock

    yield make
    for st in stacks:
        st.close()


def test_context_off_indexes_every_memory_alone(stack_with, hash_embedder):
    stack, me, project, clock = stack_with(context_sides="none")
    ask = save(stack, me, project, ASK, clock)
    answer = save(stack, me, project, ANSWER, clock)
    assert text_hits(stack, me, project, "pottery") == [ask]
    own = embedding_text(stack.metadata.get_chunks(me.organization_id, answer)[0])
    assert stored_vector(stack, answer) == pytest.approx(np.asarray(hash_embedder.embed_documents([own])[0]), abs=1e-6)


def test_the_before_side_alone_leaves_earlier_entries_as_they_are(stack_with, hash_embedder):
    # Given context from the memory saved before only
    stack, me, project, clock = stack_with(context_sides="before")
    ask = save(stack, me, project, ASK, clock)
    calls = hash_embedder.calls
    answer = save(stack, me, project, ANSWER, clock)
    # Then the answer carries the question, the question not the answer, and the save embedded
    # once (its own text and its window together), rebuilding nothing
    assert text_hits(stack, me, project, "pottery") == [ask, answer]
    assert text_hits(stack, me, project, "bowl") == [answer]
    assert hash_embedder.calls == calls + 1


def test_the_text_field_can_be_off_while_vectors_mix(stack_with):
    stack, me, project, clock = stack_with(context_text_weight=0.0)
    ask = save(stack, me, project, ASK, clock)
    answer = save(stack, me, project, ANSWER, clock)
    assert text_hits(stack, me, project, "pottery") == [ask]
    assert stored_vector(stack, answer) == pytest.approx(expected_vector(stack, me, answer, before=ASK), abs=1e-6)


def test_with_the_vector_window_before_only_the_next_save_embeds_nothing_for_the_previous_one(
    stack, who, project, clock
):
    # Given contextual indexing whose vector window leaves the "after" side to the text field
    stack.services = replace(stack.services, settings=stack.services.settings.model_copy(update={"context_vector_sides": "before"}))
    emb = stack.services.embedder
    ask = save(stack, who, project, ASK, clock)
    answer = save(stack, who, project, ANSWER, clock)
    calls = []
    original = emb.embed_documents
    emb.embed_documents = lambda texts: (calls.extend(texts), original(texts))[1]
    try:
        later = save(stack, who, project, LATER, clock)
    finally:
        del emb.embed_documents
    # Then saving the third turn embedded only its own text and its window, nothing of the answer's
    later_own = embedding_text(stack.metadata.get_chunks(who.organization_id, later)[0])
    assert sorted(calls) == sorted([later_own, f"{ANSWER}\n{later_own}"])
    # and the answer's vector mixes its window with the turn before it only, while its text entry
    # carries both sides
    assert stored_vector(stack, answer) == pytest.approx(expected_vector(stack, who, answer, before=ASK), abs=1e-6)
    assert set(text_hits(stack, who, project, "weather")) == {answer, later}
    assert ask in text_hits(stack, who, project, "bowl")


class RefusingEmbedder:
    """The stack's embedder, until a deployment refuses it (a missing grant, a model not enabled): what
    Bedrock's AccessDeniedException becomes in memlane.adapters.aws.bedrock_embedder."""

    def __init__(self, inner) -> None:
        self.inner, self.refusing = inner, False

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def embed_documents(self, texts):
        if self.refusing:
            from memlane.domain.errors import MemlaneError

            raise MemlaneError("Bedrock refused the embedding request (AccessDeniedException)")
        return self.inner.embed_documents(texts)


def test_a_refused_rebuild_of_the_neighbours_is_logged_and_counted_not_swallowed(stack, who, project, clock, caplog):
    from memlane import observability
    from memlane.observability import CountingMetrics

    # Given three turns, and an embedder the deployment refuses once they are saved
    metrics, embedder = CountingMetrics(), RefusingEmbedder(stack.services.embedder)
    stack.services = replace(stack.services, metrics=metrics, embedder=embedder)
    ask = save(stack, who, project, ASK, clock)
    answer = save(stack, who, project, ANSWER, clock)
    save(stack, who, project, LATER, clock)
    embedder.refusing = True
    # When the middle one is deleted (its neighbours must be embedded again without it)
    delete_document(stack.services, who, answer)
    # Then the delete itself is done, and the refusal is an error in the log and a count the alarm watches
    assert stack.metadata.get_document(who.organization_id, answer) is None
    assert stack.metadata.get_document(who.organization_id, ask) is not None
    assert metrics.counts[observability.CONTEXT_REBUILDS_FAILED] == 1
    errors = [r for r in caplog.records if r.levelname == "ERROR" and "AccessDeniedException" in r.getMessage()]
    assert errors and "could not rebuild the context" in errors[0].getMessage()


def test_a_turn_replaced_by_a_long_version_leaves_both_neighbours_context(stack, who, project, clock):
    # Given three turns, the middle one then replaced by a version long enough for several chunks
    ask = save(stack, who, project, ASK, clock)
    answer = save(stack, who, project, ANSWER, clock)
    later = save(stack, who, project, LATER, clock)
    assert set(text_hits(stack, who, project, "bowl")) == {ask, answer, later}
    long_text = "\n\n".join(f"Bo: part {i}. " + " ".join(f"kiln{i} glaze{j}" for j in range(300)) for i in range(3))
    clock.advance(seconds=60)
    out = save_memory(stack.services, who,
                      MemoryIn(content=long_text, title="chat", project_id=project, updates_memory_id=answer))
    assert out.status == "ready" and stack.metadata.get_document(who.organization_id, out.id).chunk_count > 1
    # Then the old words are in no entry: not the hidden version's, not either neighbour's context
    assert text_hits(stack, who, project, "bowl") == []
    # and a long message is no one's context, so each neighbour is indexed as itself alone
    assert stored_vector(stack, ask) == pytest.approx(expected_vector(stack, who, ask), abs=1e-6)
    assert stored_vector(stack, later) == pytest.approx(expected_vector(stack, who, later), abs=1e-6)
