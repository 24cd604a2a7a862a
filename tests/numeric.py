"""Comparing recorded floating-point work with a stated tolerance.

A golden figure printed to the last digit holds only on the processor that printed it: OpenBLAS picks
its kernels by CPU (SkylakeX, Haswell, Zen, Prescott sum float32 in different orders) and usearch its
SIMD kernels, so the same scores differ in the 8th decimal from one x86-64 machine to another. These
helpers keep a golden test's power (every entry, every score, every order) while accepting what
float32 arithmetic cannot promise: a score within `REL` of the recorded one, and two entries whose
scores are within that tolerance of each other may trade places (they are tied), including across a
list's cut-off.

`make test-numeric` runs the tests marked `numeric` under each of those OpenBLAS kernels.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

# float32 sums of a few hundred terms carry ~1e-7 relative error; 1e-6 is ample and still catches any
# real change of a score (a changed weight, term or statistic moves the score far more than that).
REL = 1e-6
# Near zero a relative tolerance demands the impossible: a float32 dot product of unit vectors carries an
# absolute error of about sqrt(dim)·2^-24 whatever its result, so a cosine of -8.8e-5 differs by 8e-9
# between kernels (seen under Prescott). 1e-6 absolute is that error with room, and far below any change
# a weight, a term or a statistic would make.
ABS = 1e-6


def close(a: float, b: float, *, rel: float = REL, abs_: float = ABS) -> bool:
    return math.isclose(a, b, rel_tol=rel, abs_tol=abs_)


def _keyed(entries: Sequence[Sequence[Any]]) -> list[tuple[Any, int]]:
    """(id, occurrence) for each entry: an id may appear more than once (chunks of one note)."""
    seen: dict[Any, int] = {}
    out = []
    for entry in entries:
        seen[entry[0]] = seen.get(entry[0], 0) + 1
        out.append((entry[0], seen[entry[0]]))
    return out


def _fields_close(got: Sequence[Any], want: Sequence[Any], where: str, rel: float, abs_: float) -> None:
    assert len(got) == len(want), f"{where}: {list(got)} has another shape than the recorded {list(want)}"
    for g, w in zip(got, want, strict=True):
        if isinstance(w, float) or isinstance(g, float):
            assert isinstance(g, int | float) and isinstance(w, int | float), f"{where}: {g!r} vs {w!r}"
            assert close(float(g), float(w), rel=rel, abs_=abs_), f"{where}: {g!r} is not within {rel} of {w!r}"
        else:
            assert g == w, f"{where}: {g!r} != recorded {w!r}"


def assert_ranking_close(
    got: Sequence[Sequence[Any]], want: Sequence[Sequence[Any]], *, score: int = 1, where: str = "",
    rel: float = REL, abs_: float = ABS,
) -> None:
    """`got` ranks the same entries as `want`, each entry `[id, field, …]` with its score at `score`.

    Each entry's fields match the recorded ones (floats within the tolerance, everything else exactly);
    two entries may appear in the other order only when their scores are tied within the tolerance;
    an entry may be in one list and not the other only when its score ties the list's last score
    (a near-tie at the cut-off of a top-k list can let either in)."""
    assert len(got) == len(want), f"{where}: {len(got)} entries where {len(want)} were recorded"
    got_keys, want_keys = _keyed(got), _keyed(want)
    got_at = dict(zip(got_keys, got, strict=True))
    want_at = dict(zip(want_keys, want, strict=True))
    for key in set(got_keys) ^ set(want_keys):
        # it must have been a near-tie at the cut of the list it is missing from
        entry, other = (got_at[key], want) if key in got_at else (want_at[key], got)
        assert close(float(entry[score]), float(other[-1][score]), rel=rel, abs_=abs_), (
            f"{where}: {key[0]!r} ({entry[score]}) is in one ranking only and does not tie the other's last score"
        )
    common = [k for k in want_keys if k in got_at]
    for key in common:
        _fields_close(got_at[key], want_at[key], f"{where} {key[0]!r}", rel, abs_)
    got_rank = {k: i for i, k in enumerate(got_keys)}
    order = sorted(common, key=got_rank.__getitem__)
    # a pair in the other order than recorded must be a tie; checking neighbours in got's order is
    # not enough (a run of ties may hide a jump), so compare each entry with every one recorded after it
    want_rank = {k: i for i, k in enumerate(want_keys)}
    for i, a in enumerate(order):
        for b in order[i + 1:]:
            if want_rank[b] < want_rank[a]:
                sa, sb = float(want_at[a][score]), float(want_at[b][score])
                assert close(sa, sb, rel=rel, abs_=abs_), (
                    f"{where}: {a[0]!r} ({sa}) now ranks above {b[0]!r} ({sb}): not a tie, a change of order"
                )


def assert_rankings_close(got: dict[str, Any], want: dict[str, Any], **kwargs: Any) -> None:
    """`assert_ranking_close` for every query of a recorded dict of rankings (same queries)."""
    assert sorted(got) == sorted(want), "the recorded queries differ from the ones run"
    for query in want:
        assert_ranking_close(got[query], want[query], where=query, **kwargs)
