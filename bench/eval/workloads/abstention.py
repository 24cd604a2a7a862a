"""*abstention*: questions asked of a project that does not hold their answer - each conversation's
questions of the next conversation's project, each code question of the other half of the
standard library (registered by those workloads as they run) - and a fixed, seeded list of
nonsense queries asked of every project the run saved. A question abstains at a floor when no
result's `relevance` reaches it (an empty answer abstains at any floor). The server is asked with
`min_relevance: 0` when it takes that field, so that every floor is computed from one run."""

from __future__ import annotations

import random
from typing import Any

from bench.eval.scoring import Record
from bench.eval.workloads import Context

NAME = "abstention"
SEED = 22
NONSENSE = 50
_SYLLABLES = ("bra", "zum", "qui", "flo", "narp", "ex", "vol", "tiv", "gro", "wib", "ska", "lun", "dree",
              "mox", "pel", "yar", "kin", "stro", "ulf", "zep", "orn", "thak", "ble", "vim")
# Everyday words with nothing to do with each other: grammatical, meaningless together.
_WORDS = ("purple", "elephant", "calculus", "umbrella", "whisper", "granite", "saxophone", "marmalade",
          "glacier", "velvet", "lantern", "octopus", "thimble", "avalanche", "pickle", "trombone",
          "meadow", "quartz", "bicycle", "tangerine", "volcano", "pigeon", "harmonica", "cobweb",
          "lighthouse", "noodle", "satellite", "walrus", "teapot", "kaleidoscope")


def nonsense_queries(n: int = NONSENSE, seed: int = SEED) -> list[str]:
    """Half made-up words ("zumflo bradree narpex"), half everyday words that mean nothing together
    ("does the walrus velvet the granite?"); the same list on every run."""
    rng = random.Random(seed)
    out: list[str] = []
    while len(out) < n // 2:
        words = ["".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 3))) for _ in range(rng.randint(2, 4))]
        out.append(" ".join(words))
    while len(out) < n:
        a, b, c = rng.sample(_WORDS, 3)
        out.append(rng.choice((f"how does the {a} {b} a {c}", f"why is my {a} {b}", f"{a} {b} {c}",
                               f"when did the {a} meet the {b}?")))
    return out


def run(ctx: Context) -> tuple[list[Record], dict[str, Any]]:
    api = ctx.api
    records = []
    for u in ctx.unanswerable:
        ranked, relevance = api.recall(u.query, u.project_id)
        records.append(Record(NAME, "memlane", u.group, u.query, ranked, [], relevance, u.project_id))
    queries = nonsense_queries()
    for name, project_id in sorted(ctx.projects.items()):
        for q in queries:
            ranked, relevance = api.recall(q, project_id)
            records.append(Record(NAME, "memlane", "nonsense", q, ranked, [], relevance, name))
    ctx.progress(f"{NAME}: {len(records)} unanswerable questions asked")
    info = {
        "cross": len(ctx.unanswerable),
        "nonsense": len(queries),
        "projects": sorted(ctx.projects),
        "relevance": api.min_relevance or any(r.relevance is not None for r in records),
        "examples": queries[:2] + queries[-2:],
    }
    return records, info
