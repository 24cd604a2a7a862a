"""What `memlane reindex` gives back to memlane to generate again: a document as its client saved
it, without the summary, keyphrases, entities and category an earlier memlane generated, and with
a derived title memlane would now derive differently put back to the new derivation.

The writer then summarises it again (it summarises any document without a summary), so a store
written by an older memlane gets plain-text titles and summaries, Unicode-aware keyphrases and
entities, and tags that are only what people gave. What a client gave stays: its title, its tags,
its own metadata (an older memlane stored its generated phrases both as `tags`, when the client
gave none, and as `keywords`: tags equal to those keywords were generated, and go).
"""

from __future__ import annotations

import json

from memlane.domain.errors import MemlaneError
from memlane.domain.models import ContentType, Document
from memlane.ingest.extract import extract
from memlane.ingest.extract.text import derived_title, first_line_title
from memlane.ingest.summary_json import json_data

GENERATED_KEYS = ("keyphrases", "keywords", "entities", "category")
# How a document's stored text (already extracted) is read again for its title.
_STORED_AS = {ContentType.HTML: ContentType.MARKDOWN, ContentType.PDF: ContentType.TEXT,
              ContentType.EMAIL: ContentType.TEXT, ContentType.IMAGE: ContentType.TEXT,
              ContentType.AUDIO: ContentType.TEXT, ContentType.VIDEO: ContentType.TEXT}


def without_generated(doc: Document) -> Document:
    metadata = dict(doc.metadata)
    if metadata.get("tags") and metadata.get("tags") == metadata.get("keywords"):
        metadata.pop("tags")
    for key in GENERATED_KEYS:
        metadata.pop(key, None)
    return doc.model_copy(update={"summary": None, "metadata": metadata, "title": regenerated_title(doc)})


def regenerated_title(doc: Document) -> str:
    """The title derived anew when the stored one is a derived title with markup ("Q3 budget &amp;
    spend" where the heading now reads "Q3 budget & spend") or a bracket ("{"); otherwise the
    stored title (a client's title stays as given)."""
    derived = _derive(doc)
    if not derived or derived == doc.title:
        return doc.title
    if derived_title(doc.title) is None or derived_title(doc.title) == derived:
        return derived
    return doc.title


def _derive(doc: Document) -> str | None:
    content_type = _STORED_AS.get(doc.content_type, doc.content_type)
    text = doc.content
    if content_type is ContentType.JSON:
        data = json_data(text)
        text = json.dumps(data) if data is not None else text
    try:
        extracted = extract(text, content_type, source_url=doc.source_url)
    except MemlaneError:
        return None
    return extracted.title or first_line_title(extracted.text)
