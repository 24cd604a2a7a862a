"""What the embedder reads for a chunk (memlane.documents.embedded_text): its text under the title and
section path, each name once and none the chunk already opens with (issue 35: an untitled note was
embedded with its own first line two or three times). Hashing embedder: which text was embedded, not
the model's view of it."""

from __future__ import annotations

import numpy as np
import pytest

from memlane.documents.embedded_text import embedding_text, head_parts
from memlane.domain.models import Chunk, Project
from memlane.domain.requests import MemoryIn
from memlane.services.memory import save_memory

WIFI = "Home wifi is 'Weserblick_5G', password tulpe-Regen-4471. FritzBox admin page at 192.168.178.1."
FLAT = "# Flat – Weserstraße 58\n- Address: Weserstraße 58, 12045 Berlin\n- Warm rent 1,140 €"


@pytest.fixture
def project(stack, who):
    return stack.metadata.create_project(Project(organization_id=who.organization_id, name="notes", slug="notes")).id


def _stored_vector(stack, who, doc_id: str) -> np.ndarray:
    from memlane.domain.models import chunk_id_for

    row = stack.db.connection().execute(
        "SELECT vector FROM search_rows WHERE chunk_id = ?", (chunk_id_for(doc_id, 0),)).fetchone()
    return np.frombuffer(row["vector"], dtype=np.float32)


def _embedding(stack, text: str) -> np.ndarray:
    return np.asarray(stack.services.embedder.embed_documents([text])[0], dtype=np.float32)


@pytest.mark.parametrize("content", [WIFI, FLAT], ids=["first line", "markdown heading"])
def test_an_untitled_note_is_embedded_as_its_own_text(stack, who, project, content) -> None:
    # Given a note saved without a title (memlane titles it by its first line or its heading)
    out = save_memory(stack.services, who, MemoryIn(content=content, project_id=project))
    doc = stack.metadata.get_document(who.organization_id, out.id)
    assert doc.title and doc.title.split()[0] in content  # the derived title repeats the note's opening
    # Then its vector is the embedding of the note itself, not of the title repeated in front of it
    stored = _stored_vector(stack, who, out.id)
    assert np.allclose(stored, _embedding(stack, content), atol=1e-6)
    assert not np.allclose(stored, _embedding(stack, f"{doc.title}\n{content}"), atol=1e-3)


def test_a_given_title_the_note_does_not_open_with_is_embedded_in_front_of_it(stack, who, project) -> None:
    out = save_memory(stack.services, who, MemoryIn(content=WIFI, title="Router", project_id=project))
    assert np.allclose(_stored_vector(stack, who, out.id), _embedding(stack, f"Router\n{WIFI}"), atol=1e-6)


def _chunk(title: str, headings: list[str], content: str) -> Chunk:
    return Chunk(id="c", document_id="d", organization_id="o", project_id="p", content=content, chunk_index=0,
                 chunk_count=1, start_offset=0, end_offset=len(content), heading_path=headings, title=title)


def test_a_section_keeps_the_names_above_it_that_its_text_does_not_give() -> None:
    # a paragraph under "Sorting HOW TO › Key functions" that names neither: both, once each
    chunk = _chunk("Sorting HOW TO", ["Sorting HOW TO", "Key functions"], "Both list.sort() and sorted() take a key.")
    assert embedding_text(chunk) == "Sorting HOW TO › Key functions\nBoth list.sort() and sorted() take a key."
    # the section's own first chunk opens with its heading: only the page's title stays above it
    opening = _chunk("Sorting HOW TO", ["Sorting HOW TO", "Key functions"], "## Key functions\nBoth take a key.")
    assert head_parts(opening.title, opening.heading_path, opening.content) == ["Sorting HOW TO"]


def test_names_are_compared_by_their_words() -> None:
    # a derived title cut short with "…", punctuation and case aside
    assert head_parts("Allergic to penicillin (full-body rash in 2011) — always tell doctors and…", [],
                      "Allergic to penicillin (full-body rash in 2011) — always tell doctors and dentists.") == []
    assert head_parts("flat: weserstraße 58", [], "# Flat – Weserstraße 58\n- rent") == []
    # a title that is only the start of a word of the text is not what the text opens with
    assert head_parts("Pass", [], "Passport no. C4J7R2K91") == ["Pass"]
    # a conversation turn: its title (speaker, date) is not its opening
    assert head_parts("Caroline, 1:56 pm on 8 May, 2023", [], "Caroline: Hey Mel!") == ["Caroline, 1:56 pm on 8 May, 2023"]
