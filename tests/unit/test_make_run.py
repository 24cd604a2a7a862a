"""`make run` as a newcomer meets it: its output starts with memlane's own lines (no echoed
commands, no pip or setuptools warnings), and ARGS reaches `memlane serve`. Make runs the real
Makefile; the programs it would call (pip, memlane, tesseract) are stand-ins that record their
arguments, so nothing is installed or served."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


def stand_in(path: Path, script: str) -> None:
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


@pytest.fixture
def bin_dir(tmp_path: Path) -> Path:
    """A virtualenv's bin/ whose pip records its arguments and says nothing, and whose memlane says
    what it was asked to serve; tesseract is there, so `ocr` installs nothing."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    stand_in(bin_dir / "python", 'exit 0\n')
    stand_in(bin_dir / "pip", f'echo "$@" >> {tmp_path / "pip.log"}\n')
    stand_in(bin_dir / "memlane", 'echo "memlane: would run memlane $*"\n')
    stand_in(bin_dir / "tesseract", "exit 0\n")
    return bin_dir


def make_run(tmp_path: Path, bin_dir: Path, *variables: str) -> subprocess.CompletedProcess[str]:
    built = tmp_path / "dist" / "index.html"  # the web app, already built (newer than its sources)
    built.parent.mkdir(exist_ok=True)
    modules = tmp_path / "node_modules.stamp"
    modules.touch()
    built.touch()
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    return subprocess.run(
        ["make", "--no-print-directory", "-C", str(ROOT), "run", f"BIN={bin_dir}", f"VENV={tmp_path}",
         f"STAMP={tmp_path / 'installed'}", f"WEB_DIST={built}", f"WEB_MODULES={modules}", *variables],
        capture_output=True, text=True, env=env, timeout=120, check=False)


def test_make_run_passes_args_to_the_server_and_prints_only_memlanes_lines(tmp_path, bin_dir):
    (tmp_path / "installed").touch()  # set up already
    run = make_run(tmp_path, bin_dir, "ARGS=--allow-private-network", "PORT=7555")
    assert run.returncode == 0, run.stderr
    assert (run.stdout, run.stderr) == (
        "memlane: would run memlane serve --host 127.0.0.1 --port 7555 --allow-private-network\n", "")


def test_the_first_make_run_says_what_it_installs_and_pip_stays_quiet(tmp_path, bin_dir):
    run = make_run(tmp_path, bin_dir)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0].startswith("memlane: installing memlane and its Python packages into ")
    assert all(line.startswith("memlane: ") for line in lines) and run.stderr == "", run.stdout + run.stderr
    assert lines[-1] == "memlane: would run memlane serve --host 127.0.0.1 --port 7432"
    installs = (tmp_path / "pip.log").read_text().splitlines()
    assert len(installs) == 4 and all(line.startswith("install -qq ") for line in installs), installs


def test_the_package_metadata_gives_setuptools_nothing_to_warn_about():
    # the source of the ~20 lines setuptools printed on every install: a license given as a TOML table
    from setuptools.config.pyprojecttoml import apply_configuration
    from setuptools.dist import Distribution

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a deprecation warning fails the test
        dist = apply_configuration(Distribution(), ROOT / "pyproject.toml")
    assert dist.metadata.license_expression == "Apache-2.0"
