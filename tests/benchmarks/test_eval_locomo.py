"""LoCoMo data as the recall suite reads it (bench.eval.locomo): evidence parsing, turns, questions and
the `observation` facts; the bodies the conversations workload saves."""

from __future__ import annotations

import json

import pytest

from bench.eval.locomo import conversation_turns, load_conversations, parse_evidence
from bench.eval.workloads.conversations import turn_bodies


def test_evidence_ids_split_on_semicolons_and_spaces_and_malformed_ids_are_read():
    # Given evidence lists as LoCoMo writes them
    # Then each id is read once, in order, and strings naming no turn are ignored
    assert parse_evidence(["D1:3"]) == ["D1:3"]
    assert parse_evidence(["D8:6; D9:17"]) == ["D8:6", "D9:17"]
    assert parse_evidence(["D8:6 D9:17", "D10:2;D10:3"]) == ["D8:6", "D9:17", "D10:2", "D10:3"]
    assert parse_evidence(["D:11:26"]) == ["D11:26"]
    assert parse_evidence(["D", ""]) == []
    assert parse_evidence(["D1:3", "D1:3; D1:4"]) == ["D1:3", "D1:4"]


def _conversation_file(tmp_path):
    conversation = {
        "speaker_a": "Ann",
        "speaker_b": "Bo",
        "session_10_date_time": "9:00 am on 2 June, 2023",
        "session_10": [{"speaker": "Bo", "dia_id": "D10:1", "text": "Later."}],
        "session_2_date_time": "1:56 pm on 8 May, 2023",
        "session_2": [
            {"speaker": "Ann", "dia_id": "D2:1", "text": "I went hiking.", "blip_caption": "a photo of a hill"},
            {"speaker": "Bo", "dia_id": "D2:2", "text": "Nice!"},
        ],
    }
    observation = {
        "session_2_observation": {
            "Ann": [["Ann went hiking in May.", "D2:1"], ["Ann likes hills.", ["D2:1", "D2:2"]]],
            "Bo": [["Bo approves of hiking.", "D2:2; D10:1"]],
        },
        "session_10_observation": {"Bo": [["Bo said goodbye.", "D10:1"]]},
    }
    qa = [
        {"question": "Where did Ann go?", "answer": "hiking", "evidence": ["D2:1; D2:2"], "category": 4},
        {"question": "When?", "answer": "May", "evidence": ["D2:1", "D9:9"], "category": 2},
        {"question": "Nothing to find", "answer": "-", "evidence": [], "category": 1},
        {"question": "Adversarial", "adversarial_answer": "-", "evidence": ["D2:1"], "category": 5},
    ]
    path = tmp_path / "conv.json"
    path.write_text(json.dumps([{"sample_id": "c1", "conversation": conversation, "qa": qa, "observation": observation}]))
    return path, conversation


def test_turns_follow_session_numbers_and_become_the_protocols_memories(tmp_path):
    # Given a conversation whose sessions are stored out of order (session_10 before session_2)
    _, conversation = _conversation_file(tmp_path)
    turns = conversation_turns(conversation)
    # Then session 2 comes first, and each turn's memory has the protocol's content and title
    assert [t.dia_id for t in turns] == ["D2:1", "D2:2", "D10:1"]
    assert turns[0].memory() == {
        "content": "Ann: I went hiking. [shares a photo: a photo of a hill]",
        "title": "Ann, 1:56 pm on 8 May, 2023",
    }
    assert turns[1].memory()["content"] == "Bo: Nice!"


def test_questions_of_categories_1_to_4_with_evidence_are_kept(tmp_path):
    path, _ = _conversation_file(tmp_path)
    [conv] = load_conversations(path)
    # Category 5 is not asked; a question with no evidence turn is counted as skipped; an id
    # naming no turn is dropped from its question
    assert [(q.question, q.evidence) for q in conv.questions] == [
        ("Where did Ann go?", ("D2:1", "D2:2")),
        ("When?", ("D2:1",)),
    ]
    assert conv.skipped_questions == 1
    assert conv.dropped_evidence == ["D9:9"]
    with pytest.raises(ValueError, match="c2"):
        load_conversations(path, ["c2"])


def test_facts_are_read_per_session_with_their_evidence_turns_and_the_session_date(tmp_path):
    path, _ = _conversation_file(tmp_path)
    [conv] = load_conversations(path)
    # Sessions in order (2 before 10), evidence as a string, a list or "a; b", the title from the date
    assert [(f.speaker, f.text, f.evidence) for f in conv.facts] == [
        ("Ann", "Ann went hiking in May.", ("D2:1",)),
        ("Ann", "Ann likes hills.", ("D2:1", "D2:2")),
        ("Bo", "Bo approves of hiking.", ("D2:2", "D10:1")),
        ("Bo", "Bo said goodbye.", ("D10:1",)),
    ]
    assert conv.facts[0].memory() == {"content": "Ann went hiking in May.", "title": "Ann, 1:56 pm on 8 May, 2023"}
    assert conv.facts[3].memory()["title"] == "Bo, 9:00 am on 2 June, 2023"


def test_turns_carry_the_conversation_signal_only_when_the_server_takes_it(tmp_path):
    path, _ = _conversation_file(tmp_path)
    [conv] = load_conversations(path)
    with_signal = turn_bodies(conv, "p1", signal=True)
    # one conversation per session, the turn's position within its session
    assert [(b["conversation_id"], b["message_index"]) for b in with_signal] == [
        ("c1-session-2", 0), ("c1-session-2", 1), ("c1-session-10", 0)]
    assert with_signal[0]["project_id"] == "p1"
    assert with_signal[0]["content"] == "Ann: I went hiking. [shares a photo: a photo of a hill]"
    without = turn_bodies(conv, "p1", signal=False)
    assert all("conversation_id" not in b and "message_index" not in b for b in without)
