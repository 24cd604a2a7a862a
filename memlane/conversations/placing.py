"""Where each message of a conversation save goes, against what the conversation already holds
(memlane.domain.resends says when a message is the same one):

- without `message_index` (a chat client re-sending the whole history each turn): the messages
  that repeat the stored ones from the first, in order, are duplicates of them; the rest are new,
  placed after the conversation's last message;
- with `message_index`: a message at a stored index with the same text is a duplicate of it; with
  other text it is a new version of it; at an index not stored yet it is new.

A new message always has its place here, so its dedupe key (its text at its place,
memlane.ingest.pipeline.message_hash) is the same for two requests racing each other: the store
keeps one of them (MetadataStore.add_document), whichever comes first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memlane.conversations.schemas import ConversationIn, MessageIn
from memlane.domain.errors import InvalidInputError, MemlaneError
from memlane.domain.fields import MAX_SAFE_INT
from memlane.domain.models import Document
from memlane.domain.resends import Said, repeated_prefix, said_in
from memlane.ingest.pipeline import prepare
from memlane.ports import Services


@dataclass(frozen=True)
class Placement:
    duplicate_of: Document | None = None  # answered as this stored message; nothing is stored
    message_index: int | None = None  # a new message's place
    updates: str | None = None  # the stored message this one is a new version of


def place_messages(svc: Services, org_id: str, project_id: str, body: ConversationIn) -> list[Placement]:
    # The next place is read before the messages and raised to follow the last message read: a
    # racing save that stores messages between the two reads then moves both the same way. Read
    # after them, it could place this save's new messages past the racer's (which they repeat), and
    # their dedupe keys would differ.
    next_place = svc.metadata.next_message_index(org_id, project_id, body.conversation_id)
    stored = svc.metadata.conversation_documents(org_id, project_id, body.conversation_id, svc.clock.now(),
                                                 pending=True)
    texts = [stored_text(m.content) for m in body.messages]
    if body.messages[0].message_index is not None:  # on every message or on none (ConversationIn)
        return _at_given_places(stored, body.messages, texts)
    prefix = repeated_prefix([said_in(doc) for doc in stored],
                             [Said(m.role, m.speaker, text) for m, text in zip(body.messages, texts, strict=True)])
    after = max([next_place, *((doc.message_index or 0) + 1 for doc in stored)])
    if (new := len(body.messages) - prefix) and after + new - 1 > MAX_SAFE_INT:
        raise InvalidInputError(f"messages.{prefix}", f"the conversation's last message is at {after - 1}; "
                                f"{new} more would pass {MAX_SAFE_INT}, the largest position: give the messages "
                                "smaller message_index values")
    return ([Placement(duplicate_of=doc) for doc in stored[:prefix]]
            + [Placement(message_index=after + n) for n in range(len(body.messages) - prefix)])


def _at_given_places(stored: Sequence[Document], messages: Sequence[MessageIn], texts: Sequence[str]) -> list[Placement]:
    current = {doc.message_index: doc for doc in stored}  # conversation order: the latest save at an index last
    placements = []
    for message, text in zip(messages, texts, strict=True):
        doc = current.get(message.message_index)
        if doc is None:
            placements.append(Placement(message_index=message.message_index))
        elif doc.content == text:
            placements.append(Placement(duplicate_of=doc))
        else:
            placements.append(Placement(message_index=message.message_index, updates=doc.id))
    return placements


def stored_text(content: str) -> str:
    """The text a save of this content stores (what `prepare` extracts); content a save would
    refuse is compared as given, and the save then refuses it naming the message."""
    try:
        return prepare(content, None, None, None).extracted.text
    except MemlaneError:
        return content
