#!/usr/bin/env python3
"""Measure what each memlane function deploys: the dependency layer and the function code asset,
unzipped (Lambda's 250 MB limit counts function + layers unzipped) and zipped.

    python layers/measure.py --arch arm64               # builds the layer for real (pip, PyPI)
    python layers/measure.py --arch arm64 --skip-build  # measures the layer already built

Every function shares the same code asset and the same layer, so each function's unzipped size is
their sum; the table lists them all so BENCHMARKS.md can quote it directly.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import zipfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from infra import constants as c  # noqa: E402
from infra import packaging  # noqa: E402

LAMBDA_UNZIPPED_LIMIT = 262_144_000  # 250 MB: function code + all layers, unzipped
MB = 1_000_000


def zipped_size(directory: Path) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        archive = Path(tmp) / "asset.zip"
        with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED) as zf:
            for path in sorted(directory.rglob("*")):
                if path.is_file():
                    zf.write(path, path.relative_to(directory).as_posix())
        return archive.stat().st_size


def largest_entries(site: Path, count: int = 10) -> list[tuple[str, int]]:
    sizes = []
    for entry in site.iterdir():
        size = packaging.directory_size(entry) if entry.is_dir() else entry.stat().st_size
        sizes.append((entry.name, size))
    return sorted(sizes, key=lambda item: item[1], reverse=True)[:count]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--arch", choices=c.ARCHITECTURES, default="arm64")
    parser.add_argument("--skip-build", action="store_true", help="measure the existing layers/build output")
    args = parser.parse_args(argv)

    if not args.skip_build:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        import build  # layers/build.py

        status = build.main(["--arch", args.arch])
        if status:
            return status
    layer_dir = packaging.resolve_layer_dir(args.arch, None)

    with tempfile.TemporaryDirectory() as tmp:
        code_dir = packaging.stage_function_code(Path(tmp) / "code")
        code_unzipped, code_zipped = packaging.directory_size(code_dir), zipped_size(code_dir)
    layer_unzipped, layer_zipped = packaging.directory_size(layer_dir), zipped_size(layer_dir)
    total = code_unzipped + layer_unzipped

    print(f"memlane Lambda sizes ({args.arch}, Python {c.LAMBDA_PYTHON_VERSION})")
    for label, unzipped, zipped in (
        (f"dependency layer '{c.LAYER_NAME}'", layer_unzipped, layer_zipped),
        ("function code asset", code_unzipped, code_zipped),
    ):
        print(f"  {label:26s} {unzipped / MB:8.1f} MB unzipped  {zipped / MB:6.1f} MB zipped")
    print("  largest entries in the layer:")
    for name, size in largest_entries(layer_dir / "python"):
        print(f"    {name:40s} {size / MB:6.1f} MB")
    print()
    print(f"  {'function':34s} {'handler':44s} {'unzipped':>9s}  {'of 250 MB':>9s}")
    for spec in c.ALL_FUNCTIONS:
        share = 100 * total / LAMBDA_UNZIPPED_LIMIT
        print(f"  {spec.construct_id:34s} {spec.handler:44s} {total / MB:7.1f}MB  {share:8.1f}%")
    if total > LAMBDA_UNZIPPED_LIMIT:
        print("memlane: over Lambda's 250 MB unzipped limit", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
