"""The golden comparison (tests/numeric.py) accepts what float32 kernels differ by and nothing more:
a real change of a score or of an order still fails."""

from __future__ import annotations

import pytest
from numeric import assert_ranking_close

RECORDED = [["a", 3.239797557], ["b", 0.330205828], ["c", 0.322228402], ["d", 0.3222284], ["e", 0.1]]


def test_scores_differing_in_the_eighth_decimal_pass():
    # Given the scores SkylakeX computes where Haswell recorded RECORDED (issue 33)
    got = [["a", 3.239797557], ["b", 0.330205858], ["c", 0.322228462], ["d", 0.3222284], ["e", 0.1]]
    # Then they are the same ranking
    assert_ranking_close(got, RECORDED)


def test_tied_entries_may_trade_places():
    got = [["a", 3.239797557], ["b", 0.330205828], ["d", 0.3222284], ["c", 0.322228402], ["e", 0.1]]
    assert_ranking_close(got, RECORDED)


def test_a_near_tie_at_the_cut_off_may_let_the_other_entry_in():
    recorded = [["a", 0.9], ["b", 0.5]]  # "c" scored 0.5 too and fell just below the cut
    assert_ranking_close([["a", 0.9], ["c", 0.5000000001]], recorded)


@pytest.mark.parametrize("got, why", [
    ([["a", 3.2401], ["b", 0.330205828], ["c", 0.322228402], ["d", 0.3222284], ["e", 0.1]], "not within"),
    ([["a", 3.239797557], ["c", 0.322228402], ["b", 0.330205828], ["d", 0.3222284], ["e", 0.1]], "change of order"),
    ([["a", 3.239797557], ["b", 0.330205828], ["c", 0.322228402], ["d", 0.3222284], ["z", 0.09]], "in one ranking only"),
    ([["a", 3.239797557], ["b", 0.330205828], ["c", 0.322228402], ["d", 0.3222284]], "entries where"),
    # an entry that jumps over a run of ties is caught even though each neighbour pair is a tie
    ([["a", 3.239797557], ["e", 0.1], ["b", 0.330205828], ["c", 0.322228402], ["d", 0.3222284]], "change of order"),
])
def test_a_real_change_fails(got, why):
    with pytest.raises(AssertionError, match=why):
        assert_ranking_close(got, RECORDED)


def test_fields_other_than_scores_compare_exactly():
    recorded = [["note 1", 0.5, 0.25, True]]
    assert_ranking_close([["note 1", 0.5000000001, 0.2500000001, True]], recorded)
    with pytest.raises(AssertionError, match="recorded True"):
        assert_ranking_close([["note 1", 0.5, 0.25, False]], recorded)
    with pytest.raises(AssertionError, match="not within"):
        assert_ranking_close([["note 1", 0.5, 0.26, True]], recorded)


def test_near_zero_scores_take_the_absolute_tolerance():
    # Prescott's cosine of two nearly orthogonal float32 vectors against SkylakeX's
    assert_ranking_close([["a", -8.8364e-05]], [["a", -8.8356e-05]])
    with pytest.raises(AssertionError):
        assert_ranking_close([["a", -8.8364e-05]], [["a", -9.9e-05]])
