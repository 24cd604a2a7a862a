"""Every benchmark and evaluation in bench/ runs as `python -m bench.<name>`, and the Makefile's
`bench…` and `eval…` targets call those modules."""

from __future__ import annotations

import importlib
import importlib.util
import re
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
ENTRY_POINTS = ("ingest_recall", "nlp", "concurrency", "embedder", "aws_save", "webapp", "eval", "scale",
                "kind_filter", "fusion_bound", "calibrate_floor", "page_weight", "snapshot_checks")


@pytest.mark.parametrize("name", ENTRY_POINTS)
def test_each_entry_point_answers_help(name, capsys):
    # When `python -m bench.<name> --help` runs
    module = importlib.import_module(f"bench.{name}.__main__" if name == "eval" else f"bench.{name}")
    with pytest.raises(SystemExit) as done:
        module.main(["--help"])
    # Then it prints its usage under its own command and exits 0
    assert done.value.code == 0
    assert f"usage: python -m bench.{name}" in capsys.readouterr().out


def test_the_suite_keeps_the_flags_of_both_former_evaluations_and_chooses_workloads(capsys):
    module = importlib.import_module("bench.eval.__main__")
    with pytest.raises(SystemExit):
        module.main(["--help"])
    usage = capsys.readouterr().out
    flags = ("--docs-dir", "--queries", "--timeout", "--write", "--data-dir", "--docs-port", "--memory",
             "--conversation", "--workloads", "--cache-dir", "--report-only")
    assert all(flag in usage for flag in flags), usage
    # workloads run in the suite's order whatever the order asked; an unknown one is refused
    assert module.parse_workloads("abstention,code, conversations") == ["conversations", "code", "abstention"]
    with pytest.raises(SystemExit):
        module.main(["--workloads", "code,bogus"])
    assert "unknown workload(s) bogus" in capsys.readouterr().err


def test_the_make_targets_call_the_bench_modules():
    # Given the Makefile's benchmark and evaluation targets
    makefile = (REPO_ROOT / "Makefile").read_text()
    variables = {name: value.replace("\\\n", " ") for name, value in
                 re.findall(r"^(\w+) :?= ((?:.*\\\n)*.*)$", makefile, flags=re.M)}
    recipes = {
        target: re.sub(r"\$\((\w+)\)", lambda m: variables.get(m.group(1), m.group(0)), recipe)
        for target, recipe in re.findall(r"^((?:bench|eval)[\w-]*):.*\n\t(?:@.*\n\t)?(.+)$", makefile, flags=re.M)
    }
    assert {"bench", "bench-nlp", "bench-concurrency", "bench-embedder", "bench-aws-save", "bench-web", "eval",
            "eval-conversations", "eval-facts", "eval-code", "eval-docs", "eval-abstention", "eval-floor"} <= set(recipes)
    # Then each runs a module of bench/ that exists
    for target, recipe in recipes.items():
        found = re.search(r"-m (bench[.\w]*)", recipe)
        assert found, f"make {target}: {recipe}"
        assert importlib.util.find_spec(found.group(1)) is not None, f"make {target}: {found.group(1)}"


def test_each_workload_has_its_make_target():
    makefile = (REPO_ROOT / "Makefile").read_text()
    for workload in ("conversations", "facts", "code", "docs"):
        assert re.search(rf"^eval-{workload}:.*\n(?:\t@.*\n)?\t\$\(EVAL\) --workloads {workload}$", makefile, flags=re.M)
    assert "$(EVAL) --workloads conversations,code,abstention" in makefile
