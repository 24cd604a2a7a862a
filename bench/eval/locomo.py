"""LoCoMo-style data (../shared/eval/README.md): turns, questions and the `observation` facts."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


def shared_eval_dir() -> Path:
    """../shared/eval beside the repository (a git worktree one level deeper finds ../../shared)."""
    root = Path(__file__).resolve().parents[2]
    for candidate in (root.parent / "shared" / "eval", root.parent.parent / "shared" / "eval"):
        if candidate.is_dir():
            return candidate
    return root.parent / "shared" / "eval"


DEFAULT_DATA = shared_eval_dir() / "locomo-dev.json"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}

# A turn id is "D<session>:<turn>". Evidence strings sometimes hold several ids separated by ";"
# or spaces, and a few are malformed ("D:11:26"): the pattern reads the two numbers either way.
_DIA_ID = re.compile(r"D\s*:?\s*(\d+)\s*:\s*(\d+)")
_SESSION = re.compile(r"session_(\d+)")
_OBSERVATION = re.compile(r"session_(\d+)_observation")


@dataclass(frozen=True)
class Turn:
    dia_id: str
    speaker: str
    text: str
    caption: str | None
    date_time: str
    session: int = 0
    index: int = 0  # the turn's position in its session, from 0

    def memory(self) -> dict[str, str]:
        """The POST /v3/memory body of this turn (without the project)."""
        content = f"{self.speaker}: {self.text}"
        if self.caption:
            content += f" [shares a photo: {self.caption}]"
        return {"content": content, "title": f"{self.speaker}, {self.date_time}"}


@dataclass(frozen=True)
class Fact:
    """One `observation` fact: a sentence about a speaker and the turns it came from."""

    sample_id: str
    speaker: str
    text: str
    evidence: tuple[str, ...]
    date_time: str

    def memory(self) -> dict[str, str]:
        return {"content": self.text, "title": f"{self.speaker}, {self.date_time}"}


@dataclass(frozen=True)
class Question:
    question: str
    category: int
    evidence: tuple[str, ...]  # turn ids that exist in the conversation, each once


@dataclass
class Conversation:
    sample_id: str
    turns: list[Turn]
    questions: list[Question]
    facts: list[Fact] = field(default_factory=list)
    dropped_evidence: list[str] = field(default_factory=list)  # ids naming no turn
    skipped_questions: int = 0  # category 1-4 questions left without any evidence turn


def parse_evidence(items: Iterable[str]) -> list[str]:
    """The turn ids of an evidence list, in order, each once."""
    ids = [f"D{s}:{t}" for item in items for s, t in _DIA_ID.findall(str(item))]
    return list(dict.fromkeys(ids))


def _dates(conversation: dict[str, Any]) -> dict[int, str]:
    return {
        int(m.group(1)): str(conversation.get(f"session_{m.group(1)}_date_time", "")).strip()
        for key in conversation
        if (m := _SESSION.fullmatch(key))
    }


def conversation_turns(conversation: dict[str, Any]) -> list[Turn]:
    """Every turn, sessions in order (session_2 before session_10)."""
    sessions = sorted(
        (int(m.group(1)), key)
        for key in conversation
        if (m := _SESSION.fullmatch(key)) and isinstance(conversation[key], list)
    )
    turns: list[Turn] = []
    for number, key in sessions:
        when = str(conversation.get(f"session_{number}_date_time", "")).strip()
        for index, t in enumerate(conversation[key]):
            caption = t.get("blip_caption")
            turns.append(
                Turn(
                    dia_id=str(t["dia_id"]),
                    speaker=str(t["speaker"]),
                    text=str(t["text"]),
                    caption=str(caption).strip() if caption else None,
                    date_time=when,
                    session=number,
                    index=index,
                )
            )
    return turns


def observation_facts(sample_id: str, observation: dict[str, Any], conversation: dict[str, Any]) -> list[Fact]:
    """Every fact of every session, sessions in order; evidence read as turn ids."""
    dates = _dates(conversation)
    sessions = sorted((int(m.group(1)), key) for key in observation if (m := _OBSERVATION.fullmatch(key)))
    facts: list[Fact] = []
    for number, key in sessions:
        for speaker, pairs in (observation[key] or {}).items():
            for pair in pairs:
                text, evidence = pair[0], pair[1] if len(pair) > 1 else []
                items = evidence if isinstance(evidence, list) else [evidence]
                facts.append(Fact(sample_id, str(speaker), str(text), tuple(parse_evidence(items)), dates.get(number, "")))
    return facts


def load_conversations(path: Path, only: Sequence[str] = ()) -> list[Conversation]:
    items = json.loads(Path(path).read_text())
    out: list[Conversation] = []
    for item in items:
        if only and item["sample_id"] not in only:
            continue
        turns = conversation_turns(item["conversation"])
        known = {t.dia_id for t in turns}
        conv = Conversation(item["sample_id"], turns, [])
        conv.facts = observation_facts(item["sample_id"], item.get("observation") or {}, item["conversation"])
        for qa in item["qa"]:
            category = int(qa["category"])
            if category not in CATEGORIES:
                continue
            ids = parse_evidence(qa.get("evidence") or [])
            conv.dropped_evidence += [i for i in ids if i not in known]
            ids = [i for i in ids if i in known]
            if not ids:
                conv.skipped_questions += 1
                continue
            conv.questions.append(Question(str(qa["question"]), category, tuple(ids)))
        out.append(conv)
    missing = set(only) - {c.sample_id for c in out}
    if missing:
        raise ValueError(f"conversations not in {path}: {', '.join(sorted(missing))}")
    return out
