"""Every benchmark and evaluation in bench/ runs as `python -m bench.<name>`, and the Makefile's
`bench…` and `eval…` targets call those modules."""

from __future__ import annotations

import importlib
import importlib.util
import re
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
ENTRY_POINTS = ("ingest_recall", "nlp", "concurrency", "embedder", "aws_save", "webapp", "eval_docs", "eval_memory")


@pytest.mark.parametrize("name", ENTRY_POINTS)
def test_each_entry_point_answers_help(name, capsys):
    # When `python -m bench.<name> --help` runs
    module = importlib.import_module(f"bench.{name}")
    with pytest.raises(SystemExit) as done:
        module.main(["--help"])
    # Then it prints its usage under its own command and exits 0
    assert done.value.code == 0
    assert f"usage: python -m bench.{name}" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("name", "flags"),
    [
        # the flags `memlane eval` had, split between the two evaluations
        ("eval_docs", ("--docs-dir", "--queries", "--timeout", "--write", "--data-dir", "--docs-port")),
        ("eval_memory", ("--memory", "--conversation", "--write", "--data-dir")),
    ],
)
def test_the_evaluations_keep_the_flags_of_memlane_eval(name, flags, capsys):
    module = importlib.import_module(f"bench.{name}")
    with pytest.raises(SystemExit):
        module.main(["--help"])
    usage = capsys.readouterr().out
    assert all(flag in usage for flag in flags), usage


def test_the_make_targets_call_the_bench_modules():
    # Given the Makefile's benchmark and evaluation targets
    makefile = (REPO_ROOT / "Makefile").read_text()
    recipes = dict(re.findall(r"^((?:bench|eval)[\w-]*):.*\n\t(?:@.*\n\t)?(.+)$", makefile, flags=re.M))
    assert {"bench", "bench-nlp", "bench-concurrency", "bench-embedder", "bench-aws-save", "bench-web", "eval",
            "eval-memory"} <= set(recipes)
    # Then each runs a module of bench/ that exists
    for target, recipe in recipes.items():
        found = re.search(r"-m (bench\.\w+)", recipe)
        assert found, f"make {target}: {recipe}"
        assert importlib.util.find_spec(found.group(1)) is not None, f"make {target}: {found.group(1)}"
