"""Re-sent conversations: which messages repeat the stored ones (memlane.domain.resends), and
`memlane doctor` finding and removing the copies that saves stored before they recognised a re-send,
without losing a fact drawn from a copy."""

from __future__ import annotations

from memlane.domain.resends import Said, repeated_prefix, resent_copies
from memlane.local.doctor import examine

U, A = "user", "assistant"


def says(*turns: tuple[str, str]) -> list[Said]:
    return [Said(role, None, text) for role, text in turns]


HI, HELLO, OK, BYE = (U, "hi"), (A, "hello, how can I help?"), (U, "ok"), (A, "bye")


def test_a_request_repeats_the_stored_messages_from_the_first_in_order() -> None:
    stored = says(HI, HELLO, OK)
    assert repeated_prefix(stored, says(HI, HELLO, OK, BYE)) == 3  # the history and a new turn
    assert repeated_prefix(stored, says(HI, HELLO)) == 2  # an older request sent again
    assert repeated_prefix(stored, says(OK)) == 0  # "ok" again later is a new message
    assert repeated_prefix(stored, says(HELLO, OK)) == 0  # not from the first
    assert repeated_prefix(stored, says((A, "hi"))) == 0  # said by someone else
    assert repeated_prefix(stored, [Said(U, "Sam", "hi")]) == 0  # the speaker counts too
    assert repeated_prefix([], says(HI)) == 0


def test_copies_are_runs_that_repeat_the_whole_conversation_before_them() -> None:
    # Given turns stored the old way: each request's whole history appended again
    stored = says(HI, HELLO, HI, HELLO, OK, BYE, HI, HELLO, OK, BYE, OK)
    # Then the two re-sends are copies, each position mapped to what it copies; the last "ok" is new
    assert resent_copies(stored) == {2: 0, 3: 1, 6: 0, 7: 1, 8: 4, 9: 5}
    # and a line said twice in one conversation is no copy
    assert resent_copies(says(HI, HELLO, OK, HELLO, OK)) == {}
    assert resent_copies(says(HI, OK, HELLO, OK)) == {}


def test_doctor_reports_and_removes_the_copies_keeping_the_facts_drawn_from_them(world) -> None:
    # Given a conversation saved before re-sends were recognised: its first request without
    # extraction, then the whole history sent again with a new message (stored after it, as saves
    # did), the facts drawn from that second request
    paris, hiking, rex = "I live in Paris, near the canal.", "I love hiking on weekends.", "We adopted a dog, his name is Rex!"

    def send(texts: list[str], first_index: int, extract: bool) -> dict:
        status, body = world.call("POST", "/v3/conversations", {
            "conversation_id": "c1", "extract": extract,
            "messages": [{"speaker": "Alice", "role": "user", "content": t, "message_index": first_index + i}
                         for i, t in enumerate(texts)]})
        assert status == 201, body
        return body

    first = send([paris, hiking], 0, extract=False)
    second = send([paris, hiking, rex], 2, extract=True)
    world.worker.drain()
    copies = [m["id"] for m in second["messages"][:2]]
    fact_ids = {f["text"]: f["fact_id"] for f in world.call("GET", f"/v3/extractions/{second['extraction']['id']}")[1]["facts"]}
    assert set(fact_ids) == {"Alice lives in Paris", "Alice likes hiking", "Alice has a dog named Rex"}

    # When the doctor looks: it reports the two copies, and nothing else
    report = examine(world.stack)
    assert report.conversation_duplicates == copies and report.total == 2
    assert report.as_dict()["conversation_duplicates"] == 2
    # When it repairs
    assert examine(world.stack, repair=True).repaired
    # Then the conversation holds each message once, the facts drawn from the copies now come from
    # the originals, and nothing is left to report
    status, conversation = world.call("GET", "/v3/conversations/c1")
    assert [(m["message_index"], m["content"]) for m in conversation["messages"]] == [(0, paris), (1, hiking), (4, rex)]
    status, fact = world.call("GET", f"/v3/documents/{fact_ids['Alice lives in Paris']}")
    assert status == 200 and fact["fact"]["sources"] == [first["messages"][0]["id"]]
    status, original = world.call("GET", f"/v3/documents/{first['messages'][1]['id']}")
    assert original["derived_facts"] == [fact_ids["Alice likes hiking"]]
    for copy in copies:
        assert world.call("GET", f"/v3/documents/{copy}")[0] == 404
    assert examine(world.stack).total == 0
    hits = world.recall("Paris canal", filters={"kind": ["message"]})
    assert sorted(h["chunks"][0]["content"] for h in hits) == sorted([paris, hiking, rex])


def test_a_save_racing_between_the_two_reads_of_a_re_send_leaves_one_copy(world, monkeypatch) -> None:
    # Given a conversation of two messages, and a chat client that re-sends it with two new ones
    def send(*turns: tuple[str, str]) -> dict:
        status, body = world.call("POST", "/v3/conversations", {
            "conversation_id": "race", "extract": False,
            "messages": [{"role": role, "content": text} for role, text in turns]})
        assert status == 201, body
        return body

    send(HI, HELLO)
    # When another client's identical re-send is stored between the placing's two reads of the
    # conversation (its messages and its next place), whichever it reads first
    store = world.stack.services.metadata
    racer = {"pending": True}

    def racing(name: str):
        read = getattr(store, name)

        def call(*args, **kwargs):
            out = read(*args, **kwargs)
            if racer.pop("pending", False):
                send(HI, HELLO, OK, BYE)
            return out
        return call

    for name in ("next_message_index", "conversation_documents"):
        monkeypatch.setattr(store, name, racing(name))
    answer = send(HI, HELLO, OK, BYE)
    # Then the conversation holds each message once, and this answer calls all four duplicates
    monkeypatch.undo()
    status, listed = world.call("GET", "/v3/conversations/race")
    assert status == 200, listed
    assert [(m["message_index"], m["content"]) for m in listed["messages"]] == [
        (0, HI[1]), (1, HELLO[1]), (2, OK[1]), (3, BYE[1])]
    assert answer["duplicates"] == 4 and answer["saved"] == 0


def test_a_conversation_at_the_last_position_refuses_more_messages_with_a_400(world) -> None:
    # Given a conversation whose message sits at the largest position a client can read exactly
    status, body = world.call("POST", "/v3/conversations", {
        "conversation_id": "full", "extract": False,
        "messages": [{"role": "user", "content": "first", "message_index": 2**53 - 1}]})
    assert status == 201, body
    # When a message without an index follows it, Then it is a 400 naming the message, not a 500
    status, body = world.call("POST", "/v3/conversations", {
        "conversation_id": "full", "extract": False, "messages": [{"role": "user", "content": "second"}]})
    assert status == 400, body
    assert body["error"].startswith("messages.0") and "largest position" in body["error"]
