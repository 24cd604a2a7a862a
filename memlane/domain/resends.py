"""Re-sent conversations: chat clients send a conversation's whole history with every turn.

A message is the same message when the same role and speaker said the same text. A request whose
messages repeat the conversation's stored messages in order, from its first, re-sends them: those
are answered as duplicates and only what follows is new. The rule is about the conversation's order,
never about text alone: "ok" said again later is a new message.

`resent_copies` applies the same rule to a conversation stored before saves knew it (each re-send
stored again after what was there): a run of messages that repeats everything stored before it,
from the first message on, is a re-send's copy (`memlane doctor` reports and removes them).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memlane.domain.facts import own_metadata
from memlane.domain.models import Document


@dataclass(frozen=True)
class Said:
    """Who said a message and what: what makes two messages of a conversation the same one."""

    role: str | None
    speaker: str | None
    text: str


def repeated_prefix(stored: Sequence[Said], sent: Sequence[Said]) -> int:
    """How many of `sent`, from its first, repeat `stored` from its first, in order."""
    count = 0
    for before, now in zip(stored, sent, strict=False):
        if before != now:
            break
        count += 1
    return count


def said_in(doc: Document) -> Said:
    """Who said a stored message and what (a memory saved with a conversation_id but no role or
    speaker is never the same as a message sent now, which names one)."""
    own = own_metadata(doc)
    role, speaker = own.get("role"), own.get("speaker")
    return Said(role if isinstance(role, str) else None, speaker if isinstance(speaker, str) else None, doc.content)


def resent_copies(messages: Sequence[Said]) -> dict[int, int]:
    """The messages (positions in conversation order) that are copies of a re-send, each with the
    position of the message it copies: a copy is part of a run that repeats the whole conversation
    as it stood before the run, from its first message."""
    history: list[int] = []  # positions of the messages that are not copies, in order
    copies: dict[int, int] = {}
    i = 0
    while i < len(messages):
        end = i + len(history)
        if history and list(messages[i:end]) == [messages[h] for h in history]:
            copies.update(zip(range(i, end), history, strict=True))
            i = end
        else:
            history.append(i)
            i += 1
    return copies
