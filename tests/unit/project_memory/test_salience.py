"""Salience levels and their retention: CRITICAL never, HIGH 90, MEDIUM 30, LOW 7, NOISE 1 day."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest
from fakes import FixedClock

from memlane.domain.errors import InvalidInputError
from memlane.domain.requests import MemoryIn
from memlane.domain.salience import Salience, apply_salience, forget_after_for, parse_salience, salience_of
from memlane.services.memory import get_document, save_memory


@pytest.fixture
def clock(stack):
    c = FixedClock()
    stack.services = replace(stack.services, clock=c)
    return c


@pytest.mark.parametrize(("level", "days"), [("CRITICAL", None), ("HIGH", 90), ("MEDIUM", 30), ("LOW", 7),
                                             ("NOISE", 1)])
def test_saving_with_a_salience_sets_forget_after_from_its_retention(stack, who, clock, level, days):
    body = MemoryIn(content=f"a {level} memory", metadata={"salience": level})
    out = save_memory(stack.services, who, body, inline=True)
    doc = get_document(stack.services, who, out.id)
    assert doc.metadata["salience"] == level
    assert doc.created_at == clock.now()
    expected = None if days is None else clock.now() + timedelta(days=days)
    assert doc.forget_after == expected


def test_salience_is_case_insensitive_and_an_explicit_forget_after_wins(stack, who, clock):
    given = clock.now() + timedelta(days=400)
    out = save_memory(stack.services, who, MemoryIn(content="keep this a long time",
                                                     metadata={"salience": "noise"}, forget_after=given),
                      inline=True)
    doc = get_document(stack.services, who, out.id)
    assert doc.metadata["salience"] == "NOISE" and doc.forget_after == given


def test_without_a_salience_nothing_expires_but_reads_see_medium(stack, who, clock):
    out = save_memory(stack.services, who, MemoryIn(content="an ordinary note"), inline=True)
    doc = get_document(stack.services, who, out.id)
    assert doc.forget_after is None and "salience" not in doc.metadata
    assert salience_of(doc.metadata) is Salience.MEDIUM
    assert salience_of({"salience": "bogus"}) is Salience.MEDIUM  # stored data never breaks a read


def test_an_unknown_salience_is_a_400_naming_the_field(stack, who):
    allowed = "metadata.salience: must be one of CRITICAL, HIGH, MEDIUM, LOW, NOISE"
    with pytest.raises(InvalidInputError, match=allowed):
        save_memory(stack.services, who, MemoryIn(content="x", metadata={"salience": "URGENT"}), inline=True)
    with pytest.raises(InvalidInputError):
        parse_salience(3)


def test_pure_helpers():
    now = FixedClock().now()
    assert [s.rank for s in Salience] == [4, 3, 2, 1, 0]
    assert forget_after_for(Salience.LOW, now, None) == now + timedelta(days=7)
    assert forget_after_for(Salience.CRITICAL, now, None) is None
    assert apply_salience({"tags": ["a"]}, now, None) == ({"tags": ["a"]}, None)
    assert apply_salience({"salience": "high"}, now, None) == ({"salience": "HIGH"}, now + timedelta(days=90))
