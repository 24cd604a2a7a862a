#!/usr/bin/env python3
"""Build memlane's Lambda dependency layer without Docker.

    python layers/build.py --arch arm64            # what `make layers` runs
    python layers/build.py --arch arm64 --dry-run  # print the pip command, change nothing

pip downloads manylinux wheels for the functions' architecture and CPython version (never sdists,
so nothing is compiled on this machine) into layers/build/<layer>/python, the layout Lambda mounts
at /opt/python. The result is then pruned: bytecode compiled by this machine's Python, test suites,
console scripts and install RECORDs. The AWS SDK stays: the layer ships its own pinned boto3 (see
layers/deps/requirements.txt), not the one the Lambda runtime happens to have. A manifest
(layers/build/<layer>.json) records architecture, Python version and the requirements' digest;
synth refuses a layer whose manifest does not match the deployment.
"""

from __future__ import annotations

import argparse
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from infra import constants as c  # noqa: E402
from infra import packaging  # noqa: E402

# Installed as dependencies but never imported by memlane: opensearch-py 3.x declares its gRPC
# transport (opensearch-protobufs → grpcio, protobuf: ~19 MB), while memlane talks to OpenSearch
# over HTTPS with SigV4 (opensearchpy.RequestsHttpConnection). Removed by their install RECORD.
UNUSED_DISTRIBUTIONS = ("grpcio", "protobuf", "opensearch-protobufs")
PRUNED_DIR_NAMES = ("__pycache__", "tests")
PRUNED_FILE_SUFFIXES = (".pyc", ".pyo")
PRUNED_DIST_INFO_FILES = ("RECORD", "INSTALLER", "REQUESTED", "direct_url.json")


def available_layers(root: Path = REPO_ROOT) -> list[str]:
    return sorted(p.parent.name for p in (root / c.LAYERS_DIR).glob("*/requirements.txt"))


def pip_command(
    layer: str, arch: str, python_version: str = c.LAMBDA_PYTHON_VERSION, python: str = sys.executable
) -> list[str]:
    """The pip invocation, with paths relative to the repository root (where it runs)."""
    target = Path(c.LAYER_BUILD_DIR, layer, "python").as_posix()
    requirements = Path(c.LAYERS_DIR, layer, "requirements.txt").as_posix()
    command = [python, "-m", "pip", "install", "--disable-pip-version-check", "--no-compile"]
    for platform in c.PIP_PLATFORMS[arch]:
        command += ["--platform", platform]
    command += [
        "--implementation",
        "cp",
        "--python-version",
        python_version,
        "--only-binary=:all:",
        "--target",
        target,
        "-r",
        requirements,
    ]
    return command


def remove_distribution(site: Path, name: str) -> bool:
    """Delete an installed distribution's files as listed in its RECORD, then its dist-info."""
    normalized = name.replace("-", "_").lower()
    infos = [p for p in site.glob("*.dist-info") if p.name.split("-")[0].lower() == normalized]
    for info in infos:
        record = info / "RECORD"
        if record.is_file():
            for line in record.read_text().splitlines():
                relative = line.split(",")[0]
                target = (site / relative).resolve()
                if relative and site.resolve() in target.parents and target.is_file():
                    target.unlink()
        shutil.rmtree(info)
    for directory in sorted((p for p in site.rglob("*") if p.is_dir()), key=lambda p: len(p.parts),
                            reverse=True):
        if not any(directory.iterdir()):
            directory.rmdir()  # folders the RECORD emptied (e.g. google/protobuf)
    return bool(infos)


def prune(site: Path) -> int:
    """Remove what a Lambda never needs from an installed layer; returns the bytes freed."""
    before = packaging.directory_size(site)
    for name in UNUSED_DISTRIBUTIONS:
        remove_distribution(site, name)
    if (site / "bin").is_dir():
        shutil.rmtree(site / "bin")  # console scripts (openai, httpx, pygmentize...)
    for path in sorted(site.rglob("*"), key=lambda p: len(p.parts), reverse=True):
        if path.is_dir() and path.name in PRUNED_DIR_NAMES:
            shutil.rmtree(path, ignore_errors=True)
        elif (
            path.is_file()
            and path.suffix in PRUNED_FILE_SUFFIXES
            or path.is_file()
            and path.parent.name.endswith(".dist-info")
            and path.name in PRUNED_DIST_INFO_FILES
        ):
            path.unlink()
    return before - packaging.directory_size(site)


def build(
    layer: str, arch: str, *, dry_run: bool = False, python_version: str = c.LAMBDA_PYTHON_VERSION
) -> int:
    command = pip_command(layer, arch, python_version)
    if dry_run:
        print(shlex.join(command))
        return 0
    if python_version != c.LAMBDA_PYTHON_VERSION:
        print(
            f"layers/build.py: the functions run Python {c.LAMBDA_PYTHON_VERSION}, not {python_version}",
            file=sys.stderr,
        )
        return 2
    out = packaging.layer_build_dir(layer)
    manifest = packaging.manifest_file(layer)
    if out.exists():
        shutil.rmtree(out)
    manifest.unlink(missing_ok=True)
    print(f"layers/build.py: {shlex.join(command)}", file=sys.stderr)
    result = subprocess.run(command, cwd=REPO_ROOT, check=False)
    if result.returncode != 0:
        print(
            f"layers/build.py: pip failed for layer {layer!r} ({arch}); nothing was written", file=sys.stderr
        )
        shutil.rmtree(out, ignore_errors=True)
        return result.returncode
    freed = prune(out / "python")
    manifest.write_text(packaging.expected_manifest(arch, layer).to_json())
    size = packaging.directory_size(out)
    print(
        f"layers/build.py: {layer} ({arch}): {size / 1e6:.1f} MB unzipped after pruning {freed / 1e6:.1f} MB "
        f"-> {out.relative_to(REPO_ROOT)}",
        file=sys.stderr,
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--arch",
        choices=c.ARCHITECTURES,
        default="arm64",
        help="the functions' architecture (cdk.json lambda_architecture)",
    )
    parser.add_argument(
        "--layer",
        action="append",
        choices=available_layers(),
        help="layer(s) to build (default: all under layers/)",
    )
    parser.add_argument(
        "--python-version", default=c.LAMBDA_PYTHON_VERSION, help="target CPython version of the wheels"
    )
    parser.add_argument("--dry-run", action="store_true", help="print the pip command(s) and exit")
    args = parser.parse_args(argv)
    for layer in args.layer or available_layers():
        status = build(layer, args.arch, dry_run=args.dry_run, python_version=args.python_version)
        if status:
            return status
    return 0


if __name__ == "__main__":
    sys.exit(main())
