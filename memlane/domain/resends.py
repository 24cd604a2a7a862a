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


def resent_copies(messages: Sequence[Said]) -> list[int]:
    """The positions (in conversation order) of the messages that are copies of a re-send: each run
    that repeats the whole conversation as it stood before the run, from its first message."""
    history: list[Said] = []
    copies: list[int] = []
    i = 0
    while i < len(messages):
        end = i + len(history)
        if history and list(messages[i:end]) == history:
            copies.extend(range(i, end))
            i = end
        else:
            history.append(messages[i])
            i += 1
    return copies
