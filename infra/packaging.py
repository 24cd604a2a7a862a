"""Docker-free packaging: where the dependency layer comes from and how the function code asset is
staged. Standard library only, so layers/build.py and layers/measure.py can share it.

The layer is built ahead of time by `make layers` (layers/build.py: pip wheels for the function
architecture) and described by a small manifest next to it. Synth never builds and never touches the
network: it uses the prebuilt layer, or the directory given with `-c layer_asset=<dir>`, and fails
with instructions when neither exists or when the build no longer matches the deployment.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from infra import constants as c

REPO_ROOT = Path(__file__).resolve().parent.parent


class LayerNotBuiltError(RuntimeError):
    """The layer directory is missing or was built for something else; the message says what to run."""


@dataclass(frozen=True)
class LayerManifest:
    layer: str
    arch: str
    python_version: str
    requirements_sha256: str

    def to_json(self) -> str:
        return json.dumps(self.__dict__, indent=2, sort_keys=True) + "\n"


def requirements_file(layer: str = c.LAYER_NAME, root: Path = REPO_ROOT) -> Path:
    return root / c.LAYERS_DIR / layer / "requirements.txt"


def layer_build_dir(layer: str = c.LAYER_NAME, root: Path = REPO_ROOT) -> Path:
    """The layer asset root: it holds `python/`, which Lambda mounts at /opt/python."""
    return root / c.LAYER_BUILD_DIR / layer


def manifest_file(layer: str = c.LAYER_NAME, root: Path = REPO_ROOT) -> Path:
    # Beside the asset, not inside it, so the manifest does not end up in the layer zip.
    return root / c.LAYER_BUILD_DIR / f"{layer}.json"


def requirements_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def expected_manifest(arch: str, layer: str = c.LAYER_NAME, root: Path = REPO_ROOT) -> LayerManifest:
    return LayerManifest(
        layer=layer,
        arch=arch,
        python_version=c.LAMBDA_PYTHON_VERSION,
        requirements_sha256=requirements_digest(requirements_file(layer, root)),
    )


def resolve_layer_dir(
    arch: str, layer_asset: str | None, root: Path = REPO_ROOT, layer: str = c.LAYER_NAME
) -> Path:
    """The directory to package as the dependency layer.

    `layer_asset` (context) wins and is taken as is: it must contain `python/`. Otherwise the
    output of layers/build.py is used, after checking it was built for this architecture, this
    Python version and the current requirements file.
    """
    build_command = f"python layers/build.py --arch {arch}"
    # `make layers` builds for the default architecture, arm64.
    rebuild = f"Run `make layers` ({build_command}) first" if arch == "arm64" else f"Run `{build_command}`"
    if layer_asset:
        given = Path(layer_asset)
        given = given if given.is_absolute() else root / given
        if not (given / "python").is_dir():
            raise LayerNotBuiltError(
                f"-c {c.CONTEXT_LAYER_ASSET}={layer_asset}: expected a directory containing python/ "
                "(the layout Lambda mounts at /opt/python)"
            )
        return given

    built = layer_build_dir(layer, root)
    if not (built / "python").is_dir():
        raise LayerNotBuiltError(
            f"The Lambda dependency layer has not been built ({built.relative_to(root)}/python is missing).\n"
            f"{rebuild}; it downloads manylinux wheels for {arch} with pip, no Docker needed.\n"
            "To synthesize without it (templates only), pass "
            f"-c {c.CONTEXT_LAYER_ASSET}=<dir containing python/>."
        )
    manifest_path = manifest_file(layer, root)
    if not manifest_path.is_file():
        raise LayerNotBuiltError(
            f"{manifest_path.relative_to(root)} is missing, so the layer build is unknown. {rebuild}."
        )
    found = LayerManifest(**json.loads(manifest_path.read_text()))
    wanted = expected_manifest(arch, layer, root)
    if found.arch != wanted.arch:
        raise LayerNotBuiltError(
            f"The layer was built for {found.arch} but the functions run on {arch}. {rebuild}."
        )
    if found.python_version != wanted.python_version:
        raise LayerNotBuiltError(
            f"The layer was built for Python {found.python_version}, the functions run "
            f"{wanted.python_version}. {rebuild}."
        )
    if found.requirements_sha256 != wanted.requirements_sha256:
        changed = requirements_file(layer, root).relative_to(root)
        raise LayerNotBuiltError(f"{changed} changed since the layer was built. {rebuild}.")
    return built


def handler_module_path(handler: str, root: Path = REPO_ROOT) -> Path | None:
    """The file that defines a handler string's module, or None when it does not exist (yet)."""
    module = handler.rsplit(".", 1)[0]
    base = root.joinpath(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def stage_function_code(dest: Path, root: Path = REPO_ROOT) -> Path:
    """Copy memlane/ and functions/ (sources only) into `dest`, replacing what was there.

    The asset is content-hashed by CDK, so an unchanged tree gives an unchanged asset and no
    function update on deploy.
    """
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    ignore = shutil.ignore_patterns(*c.FUNCTION_ASSET_IGNORE)
    for name in c.FUNCTION_SOURCE_DIRS:
        source = root / name
        if source.is_dir():
            shutil.copytree(source, dest / name, ignore=ignore)
    return dest


def directory_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())
