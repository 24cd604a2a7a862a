"""One configuration model (memlane.config): every variable declared once with its type, default
and description; read by name, once, where a host starts; a value the old hand-written parsers
took loosely is now refused at start, naming the variable and what it takes; the tuning defaults
written once (memlane.domain.tuning) and the OpenAPI description built from them."""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from memlane.cli import main
from memlane.config import Settings
from memlane.config.apps import ConnectionApps
from memlane.config.aws import AwsSettings, FunctionSettings
from memlane.config.docsets import DocsetSettings
from memlane.config.local import LocalConfiguration, LocalSettings
from memlane.config.model import Configuration
from memlane.config.oauth import OAuthVariables
from memlane.config.reference import _parts
from memlane.config.variables import variables_of
from memlane.domain.errors import ConfigurationError
from memlane.domain.tuning import DOCSET_FUSION, RECALL_FUSION, ContextWeights, NeighbourWeights

ROOT = Path(__file__).resolve().parents[2]
SWITCH = "expected on or off (1, true, yes, on / 0, false, no, off)"


# ------------------------------------------------------------------ refused at start, named

@pytest.mark.parametrize(("variable", "value", "said"), [
    # a switch: the old parse took anything but 0/false/no/off as on
    ("MEMLANE_CONTEXT_VECTOR", "yes please", SWITCH),
    ("MEMLANE_INDEX_IDENTIFIER_WORDS", "enabled", SWITCH),
    # ... and MEMLANE_ALLOW_PRIVATE_NETWORK anything but "1" as off
    ("MEMLANE_ALLOW_PRIVATE_NETWORK", "yes please", SWITCH),
    # a number
    ("MEMLANE_WEIGHT_VECTOR", "0.6.1", "expected a number, at least 0"),
    ("MEMLANE_WEIGHT_TEXT", "nan", "expected a number, at least 0"),
    # a choice: any embedder name was taken (and meant the local model)
    ("MEMLANE_EMBEDDER", "minilm", "expected auto, local, local-int8, local-torch, openai or bedrock"),
    # out of range: a negative weight was taken, then refused by the fusion in a request
    ("MEMLANE_WEIGHT_RECENCY", "-0.1", "expected a number, at least 0"),
    ("MEMLANE_MEDIA_OCR_SECONDS_PER_DAY", "-5", "expected a number of seconds, at least 0"),
    ("MEMLANE_CRAWL_WORKERS", "0", "expected a whole number of pages, at least 1"),
])
def test_a_value_the_old_parsers_took_loosely_stops_the_cli_naming_the_variable(
        variable, value, said, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("MEMLANE_API_URL", raising=False)
    monkeypatch.setenv(variable, value)
    assert main(["--data-dir", str(tmp_path / "data"), "keys", "list"]) == 2
    assert capsys.readouterr().err == f"memlane: {variable}={value!r}: {said}\n"
    assert not (tmp_path / "data").exists()  # refused before anything was opened


def test_a_lambda_function_is_refused_at_its_cold_start_naming_the_variable():
    with pytest.raises(ConfigurationError) as exc:
        AwsSettings.from_env({"MEMLANE_TABLE": "t", "MEMLANE_RERANK_TOP_N": "500"})
    assert exc.value.message == "MEMLANE_RERANK_TOP_N='500': expected a whole number of candidates, at least 1, at most 100"
    with pytest.raises(ConfigurationError, match="MEMLANE_RERANK_WEIGHT='0': expected a number, more than 0, at most 1"):
        AwsSettings.from_env({"MEMLANE_TABLE": "t", "MEMLANE_RERANK_WEIGHT": "0"})
    with pytest.raises(ConfigurationError, match="^MEMLANE_TABLE is not set: the DynamoDB table"):
        AwsSettings.from_env({})
    with pytest.raises(ConfigurationError) as exc:
        FunctionSettings.from_env({"MEMLANE_XRAY_SDK": "sometimes"})
    assert exc.value.message == f"MEMLANE_XRAY_SDK='sometimes': {SWITCH}"
    # the S3 Vectors backend's choices (main's parser refused them with "invalid settings: metrics")
    with pytest.raises(ConfigurationError, match="^MEMLANE_METRICS='lean': expected all or alarmed$"):
        AwsSettings.from_env({"MEMLANE_TABLE": "t", "MEMLANE_METRICS": "lean"})
    aws = AwsSettings.from_env({"MEMLANE_TABLE": "t", "MEMLANE_SEARCH_KIND": "S3Vectors", "MEMLANE_METRICS": "alarmed"})
    assert (aws.search_kind, aws.metrics, aws.vector_bucket) == ("s3vectors", "alarmed", "")


def test_the_spellings_a_switch_and_a_choice_take():
    for on in ("1", "true", "YES", " on "):
        assert Settings.from_env({"MEMLANE_CONTEXT_VECTOR": on}).context_vector is True
    for off in ("0", "False", "no", "OFF"):
        assert Settings.from_env({"MEMLANE_FUSION_COMPLETE_LEGS": off}).fusion_complete_legs is False
    assert Settings.from_env({"MEMLANE_LLM": " Off "}).llm == "off"  # as the old parser lowered it
    assert Settings.from_env({"MEMLANE_EMBEDDER_WINDOW": "128"}).embedder_window == 128
    # an empty value is unset, as before: the default
    assert Settings.from_env({"MEMLANE_WEIGHT_TEXT": "", "MEMLANE_CONTEXT_VECTOR": " "}).fusion.text == 0.4


# ------------------------------------------------------------------ read by name, once, at the edge

class Recording(Mapping[str, str]):
    """An environment that remembers every name looked up, and refuses to be read in one sweep."""

    def __init__(self, values: dict[str, str]) -> None:
        self.values, self.looked_up = values, Counter[str]()

    def __getitem__(self, key: str) -> str:
        self.looked_up[key] += 1
        return self.values[key]

    def get(self, key: str, default=None):  # type: ignore[override]
        self.looked_up[key] += 1
        return self.values.get(key, default)

    def __iter__(self) -> Iterator[str]:
        raise AssertionError("the environment was read in one sweep")

    def __len__(self) -> int:
        raise AssertionError("the environment was read in one sweep")


def test_each_part_looks_up_its_declared_variables_by_name_and_nothing_else():
    # Settings.from_env reads the OAuth part with it (Settings.oauth)
    for part, with_it in ((LocalConfiguration, [OAuthVariables]), (AwsSettings, []), (OAuthVariables, [])):
        env = Recording({"MEMLANE_TABLE": "t", "MEMLANE_GITHUB_CLIENT_ID": "id"})
        part.from_env(env)
        declared = {name for p in [part, *_parts(part), *with_it] for field in p.model_fields
                    for name in variables_of(p, field)}
        assert set(env.looked_up) == declared
        # each once, but MEMLANE_PUBLIC_URL, which Settings and the OAuth part share
        assert {k for k, n in env.looked_up.items() if n > 1} <= {"MEMLANE_PUBLIC_URL"}


def test_the_cli_reads_each_variable_once_before_the_command_runs(tmp_path, capsys, monkeypatch):
    import os

    looked_up: Counter[str] = Counter()

    class Environ(dict):
        def get(self, key, default=None):
            if Path(sys._getframe(1).f_code.co_filename).is_relative_to(ROOT / "memlane"):
                looked_up[key] += 1
            return super().get(key, default)

    monkeypatch.setattr(os, "environ", Environ({k: v for k, v in os.environ.items() if not k.startswith("MEMLANE_")}))
    assert main(["--data-dir", str(tmp_path / "data"), "remember", "Ferry at nine.", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["status"] == "ready"
    assert "MEMLANE_DATA_DIR" in looked_up and "MEMLANE_GITHUB_CLIENT_ID" in looked_up
    assert {k: n for k, n in looked_up.items() if n > 1 and k != "MEMLANE_PUBLIC_URL"} == {}


def test_constructing_a_part_reads_nothing(monkeypatch):
    monkeypatch.setenv("MEMLANE_DATA_DIR", "/elsewhere")
    monkeypatch.setenv("MEMLANE_WEIGHT_TEXT", "0.9")
    # what a test or a benchmark builds is the defaults and what it gives (the old model read
    # MEMLANE_DATA_DIR whenever a Settings was made)
    assert Settings().data_dir == Path.home() / ".memlane" and Settings().weight_text == 0.4
    assert Settings.from_env().data_dir == Path("/elsewhere") and Settings.from_env().weight_text == 0.9
    assert Settings.from_env(data_dir=Path("/flag")).data_dir == Path("/flag")  # the command line wins


# ------------------------------------------------------------------ defaults in one place

def test_the_settings_defaults_are_the_tuning_defaults():
    settings = Settings()
    assert settings.fusion == RECALL_FUSION and settings.fusion.code_text_evidence is True
    assert settings.neighbours == NeighbourWeights() and settings.context == ContextWeights()
    assert DocsetSettings().fusion == DOCSET_FUSION and DOCSET_FUSION.code_text_evidence is False
    assert Settings.from_env({}).fusion == RECALL_FUSION


def test_the_openapi_description_of_recall_is_written_from_the_defaults():
    spec = json.loads((ROOT / "clients" / "typescript" / "openapi.json").read_text(encoding="utf-8"))
    said = spec["paths"]["/v3/recall"]["post"]["description"]
    w, n = RECALL_FUSION, NeighbourWeights()
    assert said.startswith(f"Chunks ranked by {w.vector:g} · cosine + {w.text:g} · BM25 / max(max BM25 of the batch, "
                           f"{w.text_reference:g} · query words) × (share of the question's content words the chunk "
                           f"holds)^{w.text_coverage:g} + {w.recency:g} · exp(−age_days / {w.recency_days:g})")
    assert f"MEMLANE_RECALL_NEIGHBOUR_WEIGHT ({n.weight:g})" in said and f"({n.decay:g} of that" in said


def test_the_dead_neighbour_gap_is_gone():
    # unused since neighbours became the messages of one conversation: no field, no variable
    assert "recall_neighbour_max_gap_seconds" not in Settings.model_fields
    assert "max_gap_seconds" not in NeighbourWeights.__dataclass_fields__
    assert "max_gap_seconds" not in ContextWeights.__dataclass_fields__
    # a configuration that still sets it loads (the variable is not read), even with a value it refused
    assert Settings.from_env({"MEMLANE_RECALL_NEIGHBOUR_MAX_GAP_SECONDS": "soon"}).neighbours == NeighbourWeights()


def test_every_part_is_in_the_model():
    import memlane.config as config
    from memlane.config.variables import SettingsPart

    def subclasses(cls: type) -> set[type]:
        return {c for s in cls.__subclasses__() for c in {s, *subclasses(s)}}

    for module in ("apps", "aws", "client", "docsets", "local", "oauth", "settings"):
        __import__(f"memlane.config.{module}")
    declared = {c for c in subclasses(SettingsPart) if c.__module__.startswith(config.__name__)}
    in_model = set(_parts(Configuration))
    # LocalConfiguration is what a local host reads (the parts below it); ProviderApp the apps' template
    assert {c.__name__ for c in declared - in_model} == {"LocalConfiguration", "ProviderApp", "PublicAddress"}


# ------------------------------------------------------------------ reaching what the host composes

def test_the_ocr_languages_reach_tesseract(monkeypatch):
    from memlane.adapters.local.tesseract import TesseractReader
    from memlane.local.compose import make_media_readers

    monkeypatch.setattr(TesseractReader, "available", classmethod(lambda cls, command="tesseract": True))
    local = LocalSettings.from_env({"MEMLANE_OCR_LANGUAGES": "eng+deu"})
    ocr, _ = make_media_readers(Settings(), local.ocr_languages)
    assert isinstance(ocr, TesseractReader) and ocr.languages == "eng+deu"  # documented, and read by nothing before


def test_the_providers_apps_reach_the_local_connections(tmp_path, hash_embedder):
    from memlane.local.compose import build_local

    apps = ConnectionApps.from_env({"MEMLANE_GITHUB_CLIENT_ID": "gh-id", "MEMLANE_GITHUB_CLIENT_SECRET": "gh-secret",
                                    "MEMLANE_GITHUB_API_URL": "https://ghe.example/api/v3",
                                    "MEMLANE_NOTION_CLIENT_ID": "no-secret"})
    stack = build_local(Settings(data_dir=tmp_path / "d"), embedder=hash_embedder, apps=apps)
    try:
        found = stack.services.connections.apps
        github = found.app("github")
        assert (github.client_id, github.client_secret, github.api_url) == ("gh-id", "gh-secret",
                                                                            "https://ghe.example/api/v3")
        assert found.app("notion") is None  # an id without its secret is no app
    finally:
        stack.close()
