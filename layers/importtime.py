#!/usr/bin/env python3
"""Cold import time of each Lambda handler, as `python -X importtime` reports it.

    python layers/importtime.py              # every handler, 7 fresh interpreters each
    python layers/importtime.py --runs 11 --only functions.api.handler

Each run is a new interpreter importing the handler module with the environment the function is
deployed with (infra: MEMLANE_XRAY_SDK per function, Powertools' service name) and
LAMBDA_TASK_ROOT set, so Powertools behaves as on Lambda (the Tracer is not disabled as it is
outside Lambda). Two figures per handler: the cumulative import time `-X importtime` reports for
the handler module (wall clock: everything it pulls in, interpreter start-up excluded), and the CPU
time (user + system) of the whole interpreter run, which moves much less when other work shares
the machine. Compiled bytecode is written on a first, unmeasured run.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from infra import constants as c  # noqa: E402
from infra.config import DEFAULT_CONTEXT  # noqa: E402


def handler_modules() -> list[c.FunctionSpec]:
    seen: dict[str, c.FunctionSpec] = {}
    for spec in c.ALL_FUNCTIONS:
        seen.setdefault(spec.handler.rsplit(".", 1)[0], spec)
    return list(seen.values())


def deployed_env(spec: c.FunctionSpec, xray_sdk: str = "deployed") -> dict[str, str]:
    xray = (
        not spec.request_path or bool(DEFAULT_CONTEXT["xray_sdk_on_request_path"])
        if xray_sdk == "deployed"
        else xray_sdk == "on"
    )
    return {
        **os.environ,
        "LAMBDA_TASK_ROOT": str(REPO_ROOT),
        "AWS_LAMBDA_FUNCTION_NAME": spec.construct_id,
        "AWS_REGION": os.environ.get("AWS_REGION", "us-east-1"),
        c.ENV_POWERTOOLS_SERVICE_NAME: c.SERVICE_NAME,
        c.ENV_XRAY_SDK: "true" if xray else "false",
        "PYTHONPATH": str(REPO_ROOT),
    }


def _children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def import_ms(module: str, env: dict[str, str]) -> tuple[float, float]:
    """(the handler module's cumulative import time, the interpreter run's CPU time), in ms."""
    cpu_before = _children_cpu_s()
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", f"import {module}"],
        env=env,
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    cpu_ms = (_children_cpu_s() - cpu_before) * 1000
    for line in done.stderr.splitlines():
        fields = [part.strip() for part in line.split("|")]
        if len(fields) == 3 and fields[2] == module:
            return int(fields[1]) / 1000, cpu_ms
    raise RuntimeError(f"{module} not in the -X importtime output")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--only", help="one handler module, e.g. functions.api.handler")
    parser.add_argument(
        "--xray-sdk",
        choices=("deployed", "on", "off"),
        default="deployed",
        help="load Powertools' Tracer as deployed (cdk.json defaults), or force it on/off",
    )
    args = parser.parse_args(argv)
    specs = [s for s in handler_modules() if args.only in (None, s.handler.rsplit(".", 1)[0])]
    if not specs:
        parser.error(f"--only {args.only}: not a handler module of infra.constants.ALL_FUNCTIONS")
    print(f"ms, {args.runs} runs each; load average {os.getloadavg()[0]:.1f}")
    print(
        f"{'handler module':36s} {'X-Ray SDK':>9s} {'import median':>14s} {'fastest':>8s} {'CPU median':>11s}"
    )
    for spec in specs:
        module, env = spec.handler.rsplit(".", 1)[0], deployed_env(spec, args.xray_sdk)
        import_ms(module, env)  # writes __pycache__
        runs = [import_ms(module, env) for _ in range(args.runs)]
        wall, cpu = [r[0] for r in runs], [r[1] for r in runs]
        print(
            f"{module:36s} {env[c.ENV_XRAY_SDK]:>9s} {statistics.median(wall):14.0f} {min(wall):8.0f} "
            f"{statistics.median(cpu):11.0f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
