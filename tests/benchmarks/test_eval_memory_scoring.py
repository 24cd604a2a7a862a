"""The scoring of `python -m bench.eval_memory` (`make eval-memory`): evidence parsing, recall@k/hit@k,
averages per category."""

from __future__ import annotations

import json

import pytest

from bench.eval_memory import (
    Scores,
    conversation_turns,
    load_conversations,
    parse_evidence,
    percentile,
    score_ranking,
    targets_markdown,
)


def test_evidence_ids_split_on_semicolons_and_spaces_and_malformed_ids_are_read():
    # Given evidence lists as LoCoMo writes them
    # Then each id is read once, in order, and strings naming no turn are ignored
    assert parse_evidence(["D1:3"]) == ["D1:3"]
    assert parse_evidence(["D8:6; D9:17"]) == ["D8:6", "D9:17"]
    assert parse_evidence(["D8:6 D9:17", "D10:2;D10:3"]) == ["D8:6", "D9:17", "D10:2", "D10:3"]
    assert parse_evidence(["D:11:26"]) == ["D11:26"]
    assert parse_evidence(["D", ""]) == []
    assert parse_evidence(["D1:3", "D1:3; D1:4"]) == ["D1:3", "D1:4"]


def test_recall_is_the_share_of_evidence_turns_found_and_hit_whether_any_is():
    # Given a ranking of twelve documents and a question with three evidence turns
    ranking = [f"d{i}" for i in range(12)]
    # When one is 3rd, one 8th and one not returned
    s = score_ranking(ranking, ["d2", "d7", "zz"])
    # Then
    assert s["recall@5"] == pytest.approx(1 / 3)
    assert s["recall@10"] == pytest.approx(2 / 3)
    assert s["hit@5"] == 1.0 and s["hit@10"] == 1.0
    # and a turn at rank 11 is not found at 10
    assert score_ranking(ranking, ["d10"]) == {"recall@5": 0.0, "recall@10": 0.0, "hit@5": 0.0, "hit@10": 0.0}
    # and two evidence turns saved as one document count twice when that document is returned
    assert score_ranking(ranking, ["d1", "d1", "zz", "zz"])["recall@5"] == pytest.approx(0.5)


def test_a_question_without_evidence_cannot_be_scored():
    with pytest.raises(ValueError):
        score_ranking(["d1"], [])


def test_averages_are_over_questions_per_category_and_overall():
    # Given two temporal questions and one single-hop question
    scores = Scores()
    scores.add(2, score_ranking(["a", "b"], ["a"]))  # recall 1
    scores.add(2, score_ranking(["a", "b"], ["c", "b"]))  # recall 0.5
    scores.add(4, score_ranking(["a"], ["z"]))  # recall 0
    # Then each category averages its own questions and the overall figure all three
    assert scores.summary(2)["recall@10"] == pytest.approx(0.75)
    assert scores.summary(2)["hit@10"] == 1.0
    assert scores.summary(4)["recall@10"] == 0.0
    assert scores.summary()["n"] == 3
    assert scores.summary()["recall@10"] == pytest.approx(0.5)
    assert scores.summary()["hit@10"] == pytest.approx(2 / 3)
    assert scores.summary(1) == {"n": 0}


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
    qa = [
        {"question": "Where did Ann go?", "answer": "hiking", "evidence": ["D2:1; D2:2"], "category": 4},
        {"question": "When?", "answer": "May", "evidence": ["D2:1", "D9:9"], "category": 2},
        {"question": "Nothing to find", "answer": "-", "evidence": [], "category": 1},
        {"question": "Adversarial", "adversarial_answer": "-", "evidence": ["D2:1"], "category": 5},
    ]
    path = tmp_path / "conv.json"
    path.write_text(json.dumps([{"sample_id": "c1", "conversation": conversation, "qa": qa}]))
    return path, conversation


def test_turns_follow_session_numbers_and_become_the_protocols_memories(tmp_path):
    # Given a conversation whose sessions are stored out of order (session_10 before session_2)
    _, conversation = _conversation_file(tmp_path)
    turns = conversation_turns(conversation)
    # Then session 2 comes first, and each turn's memory has the protocol's content and title, as
    # a message of its session's conversation
    assert [t.dia_id for t in turns] == ["D2:1", "D2:2", "D10:1"]
    assert turns[0].memory() == {
        "content": "Ann: I went hiking. [shares a photo: a photo of a hill]",
        "title": "Ann, 1:56 pm on 8 May, 2023",
        "conversation_id": "session_2",
        "message_index": 0,
    }
    assert [(t.memory()["conversation_id"], t.memory()["message_index"]) for t in turns[1:]] == [
        ("session_2", 1), ("session_10", 0)]
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


def test_targets_name_the_categories_behind_a_baseline():
    ours, bm25, dense = Scores(), Scores(), Scores()
    for category in (1, 2, 3, 4):
        ours.add(category, score_ranking(["a"], ["a"]))
        bm25.add(category, score_ranking(["b"], ["a"]))
        dense.add(category, score_ranking(["b"], ["a"]))
    text = targets_markdown({"memlane": ours, "bm25": bm25, "minilm": dense})
    assert "recall@10 ≥ 0.80 **met (1.000)**" in text
    assert "**met (all four)**" in text
    # a tie with a baseline is not ahead
    bm25.add(2, score_ranking(["a"], ["a"]))
    bm25.by_category[2] = [score_ranking(["a"], ["a"])]
    text = targets_markdown({"memlane": ours, "bm25": bm25, "minilm": dense})
    assert "**not met (behind: temporal recall@10, temporal hit@10)**" in text


def test_percentile_is_nearest_rank():
    assert percentile([5.0, 1.0, 3.0, 2.0, 4.0], 50) == 3.0
    assert percentile(list(map(float, range(1, 101))), 95) == 95.0
    assert percentile([], 95) == 0.0
