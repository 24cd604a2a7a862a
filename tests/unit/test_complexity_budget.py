"""The complexity budget (`make lint`): ruff's C901 (McCabe) over the whole lint scope, against the
committed per-function baseline in `complexity_budget.json`. The budget only goes down:

- a function that is not in the baseline and goes over 10 fails (split it into named steps);
- a function in the baseline whose complexity rises fails;
- a function that got simpler or went under 10 fails too, until the baseline is lowered with
  `python tests/unit/test_complexity_budget.py --write`, so a gain is kept.

`noqa: C901` is refused anywhere: the baseline is the one place an exception is written down.

Functions are named by file and name (with a counter for a name defined twice in one file), not by
line, so moving code inside a file does not touch the budget."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BASELINE = Path(__file__).with_name("complexity_budget.json")
SCOPE = ("memlane", "functions", "infra", "bench", "clients/python", "codegen", "tests")
MAX = 10
MESSAGE = re.compile(r"`(?P<name>[^`]+)` is too complex \((?P<n>\d+) > \d+\)")


def measure() -> dict[str, int]:
    ruff = Path(sys.executable).with_name("ruff")
    out = subprocess.run(
        [str(ruff), "check", "--select", "C901", "--config", f"lint.mccabe.max-complexity={MAX}",
         "--output-format", "json", "--exit-zero", "--no-cache", *SCOPE],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout
    seen: Counter[str] = Counter()
    found = {}
    for v in sorted(json.loads(out), key=lambda v: (v["filename"], v["location"]["row"])):
        m = MESSAGE.fullmatch(v["message"])
        assert m, v["message"]
        key = f"{Path(v['filename']).resolve().relative_to(ROOT)}::{m['name']}"
        seen[key] += 1
        found[key if seen[key] == 1 else f"{key}#{seen[key]}"] = int(m["n"])
    return found


def test_no_function_goes_over_its_budget():
    budget, now = json.loads(BASELINE.read_text()), measure()
    new = {k: n for k, n in now.items() if k not in budget}
    rose = {k: (budget[k], n) for k, n in now.items() if k in budget and n > budget[k]}
    assert not new, f"new functions over complexity {MAX} (split them into named steps): {new}"
    assert not rose, f"functions whose complexity rose (baseline, now): {rose}"


def test_the_budget_only_goes_down():
    budget, now = json.loads(BASELINE.read_text()), measure()
    lower = {k: (n, now.get(k, f"≤ {MAX}")) for k, n in budget.items() if now.get(k, 0) < n}
    assert not lower, (
        f"these got simpler (baseline, now): {lower}; keep the gain: "
        "python tests/unit/test_complexity_budget.py --write"
    )


def test_no_noqa_hides_a_function_from_the_budget():
    hits = subprocess.run(
        ["git", "grep", "-n", "-I", "-E", "noqa[:,A-Z0-9 ]*C901", "--", *SCOPE, ":!tests/unit/test_complexity_budget.py"],
        cwd=ROOT, capture_output=True, text=True,
    ).stdout
    assert hits == "", hits


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    BASELINE.write_text(json.dumps(measure(), indent=1, sort_keys=True) + "\n")
