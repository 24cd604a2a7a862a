"""Issue 34, finding 10: a client chooses how its memory is cut (`metadata.chunking`), and every
chunk is embedded on the shared queue. `max_tokens: 32` (the old lower bound) cut the same 64,000
characters into 1,043 chunks instead of the default's 35, about 30 times the embedding work. The
rule now (memlane.domain.chunking_plan): a chunk advances at least 128 tokens past the one before,
so a plan costs about (512 − 50) / 128 ≈ 3.6 times the default's chunks at most (chunks end at
boundaries short of full: at most 4.5 times, measured on prose, code and markdown); a save asking
for more is a 400 naming the field, and a plan stored outside the bounds is not followed."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memlane.domain.chunking_plan import MIN_CHUNK_TOKENS, MIN_STEP_TOKENS, max_overlap
from memlane.domain.models import ContentType, Document
from memlane.ingest.chunking import chunk_document

DEFAULT = (512, 50)  # Settings.chunk_max_tokens, chunk_overlap_tokens
MOST_TIMES_THE_DEFAULT = 4.5


def prose(words_per_sentence: int) -> str:
    words = ["the", "greenhouse", "heater", "keeps", "tray", "warm", "through", "night", "while", "vents", "stay", "shut", "and", "seedlings", "grow"]
    sentences = [" ".join(words[(i + j) % len(words)] for j in range(words_per_sentence)).capitalize() + ". "
                 for i in range(8000)]
    return "".join(sentences)[:64_000]


TEXTS = {
    "short sentences": (prose(5), ContentType.TEXT),
    "long sentences": (prose(60), ContentType.TEXT),
    "code": ("".join(f"def f{i}(x):\n    y = x + {i}\n    return y * 2\n\n" for i in range(2000))[:64_000],
             ContentType.CODE),
    "markdown": ("".join(f"## Section {i}\n\n{prose(12)[:600]}\n\n- one\n- two\n\n" for i in range(120))[:64_000],
                 ContentType.TEXT),
    "one long line": ("x" * 64_000, ContentType.TEXT),
}


def chunks(plan: object, text: str | None = None, content_type: ContentType = ContentType.TEXT) -> int:
    now = datetime.now(UTC)
    doc = Document(organization_id="o", project_id="p", user_id="u", title="t", content=text or prose(15),
                   content_type=content_type, metadata={"chunking": plan} if plan is not None else {},
                   created_at=now, updated_at=now)
    return len(chunk_document(doc, *DEFAULT))


@pytest.mark.parametrize("kind", TEXTS)
def test_no_allowed_plan_costs_more_than_a_few_times_the_default(kind):
    text, content_type = TEXTS[kind]
    default = chunks(None, text, content_type)
    for size in (MIN_CHUNK_TOKENS, 129, 160, 200, 256, 300, 512, 1024):
        overlap = max_overlap(size)  # the tightest plan of this size
        assert size - overlap >= MIN_STEP_TOKENS
        count = chunks({"max_tokens": size, "overlap_tokens": overlap}, text, content_type)
        assert count <= MOST_TIMES_THE_DEFAULT * default, (kind, size, overlap, count, default)


def test_the_old_lower_bound_is_not_followed_when_stored():
    # A plan stored before the bound (an import, an older save): the document is cut with the host's sizes
    assert chunks({"max_tokens": 32}) == chunks(None)
    assert chunks({"max_tokens": 32, "overlap_tokens": 0}) == chunks({"overlap_tokens": 0})
    assert chunks({"max_tokens": 256, "overlap_tokens": 200}) == chunks({"max_tokens": 256})


@pytest.mark.parametrize("plan, field", [
    ({"max_tokens": 32}, "metadata.chunking.max_tokens"),
    ({"max_tokens": 127}, "metadata.chunking.max_tokens"),
    ({"max_tokens": 10**30}, "metadata.chunking.max_tokens"),
    ({"max_tokens": 256, "overlap_tokens": 129}, "metadata.chunking.overlap_tokens"),
    ({"max_tokens": 128, "overlap_tokens": 1}, "metadata.chunking.overlap_tokens"),
    ("sentences", "metadata.chunking"),
])
def test_a_save_asking_for_more_is_a_400_naming_the_field(secure_server, plan, field):
    with secure_server.client() as c:
        r = c.post("/v3/memory", json={"content": prose(15)[:2000], "metadata": {"chunking": plan}})
    assert r.status_code == 400 and r.json()["error"].startswith(f"{field}:"), r.text


def test_a_save_within_the_bounds_is_cut_as_asked(secure_server):
    with secure_server.client() as c:
        default = c.post("/v3/memory", json={"content": prose(15)[:15_000]}).json()
        tight = c.post("/v3/memory", json={"content": prose(15)[:15_000] + " Tight.",
                                           "metadata": {"chunking": {"max_tokens": 256, "overlap_tokens": 128}}})
    assert tight.status_code == 201, tight.text
    assert default["chunk_count"] < tight.json()["chunk_count"] <= MOST_TIMES_THE_DEFAULT * default["chunk_count"]
