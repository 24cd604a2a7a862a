"""The workloads of the recall suite, one module each. Each `run(ctx)` saves its units through the
API of the server in `ctx`, asks its questions, ranks the same units with both baselines, and
returns its records (bench.eval.scoring.Record) and a few facts about the run for the report. The
questions a workload can ask of a project that does not hold their answer go to
`ctx.unanswerable`, for the abstention workload."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bench.eval.server import Api

NAMES = ("conversations", "facts", "code", "docs", "notes", "abstention")


@dataclass(frozen=True)
class Unanswerable:
    group: str  # what kind of question: conversations, code, docs
    query: str
    project_id: str


@dataclass
class Context:
    api: Api
    args: Any
    unanswerable: list[Unanswerable] = field(default_factory=list)
    projects: dict[str, str] = field(default_factory=dict)  # name -> id, every project saved to
    progress: Callable[[str], None] = lambda line: print(line, file=sys.stderr, flush=True)
    stages_off: Callable[[], Any] | None = None  # a context manager: a server with the sequence stages off
