#!/usr/bin/env python3
"""memlane's CDK app.

    cdk synth / cdk deploy --all -c stage=prod     (the CDK CLI runs `python3 app.py`)
    python app.py [-c key=value ...]                (synthesizes into ./cdk.out without the CLI)

Synthesis is offline: no Docker, no AWS credentials, no network. The Lambda dependency layer is
built beforehand with `make layers`; `-c layer_asset=<dir>` points at another prebuilt layer.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from infra.config import ConfigError  # noqa: E402
from infra.packaging import LayerNotBuiltError  # noqa: E402


def parse_context(argv: list[str]) -> dict[str, str]:
    parser = argparse.ArgumentParser(
        description="Synthesize memlane's CloudFormation templates into cdk.out."
    )
    parser.add_argument(
        "-c",
        "--context",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="context value, as with `cdk -c` (repeatable)",
    )
    args = parser.parse_args(argv)
    context = {}
    for item in args.context:
        key, sep, value = item.partition("=")
        if not sep or not key:
            parser.error(f"-c {item!r}: expected KEY=VALUE")
        context[key] = value
    return context


def main(argv: list[str]) -> int:
    context = parse_context(argv)
    from infra.app import build_app

    # Under the CDK CLI, CDK_OUTDIR names the output directory; run directly, write ./cdk.out.
    outdir = None if os.environ.get("CDK_OUTDIR") else str(Path(__file__).resolve().parent / "cdk.out")
    try:
        app, stack = build_app(context, outdir=outdir)
    except (ConfigError, LayerNotBuiltError) as exc:
        print(f"memlane: {exc}", file=sys.stderr)
        return 2
    if stack.config.llm_model_note:
        print(f"memlane: {stack.config.llm_model_note}", file=sys.stderr)
    assembly = app.synth()
    if outdir:
        stacks = ", ".join(s.stack_name for s in assembly.stacks)
        print(f"memlane: synthesized {stacks} into {assembly.directory}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
