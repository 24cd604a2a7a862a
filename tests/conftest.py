"""Shared fixtures. Unit tests use a deterministic hashing embedder (no model, no network);
tests marked `slow` load the real all-MiniLM-L6-v2 once per session."""

from __future__ import annotations

import pytest
from fakes import FixedClock, HashEmbedder  # noqa: F401  (tests/ is on pythonpath)

from memlane.config import Settings
from memlane.domain.principal import Principal
from memlane.services.keys import ensure_organization


@pytest.fixture
def hash_embedder() -> HashEmbedder:
    return HashEmbedder()


@pytest.fixture
def stack(tmp_path, hash_embedder):
    from memlane.ingest.summarize import LocalSummarizer
    from memlane.local.compose import build_local

    s = build_local(
        Settings(data_dir=tmp_path / "data"), embedder=hash_embedder, summarizer=LocalSummarizer()
    )
    yield s
    s.close()


@pytest.fixture
def org(stack):
    o, _ = ensure_organization(stack.metadata, "acme")
    return o


@pytest.fixture
def who(org) -> Principal:
    return Principal(organization_id=org.id, key_id="test-key")


@pytest.fixture(scope="session")
def minilm():
    from memlane.adapters.local.embedder import MiniLMEmbedder

    e = MiniLMEmbedder()
    e.load()
    return e


@pytest.fixture
def cli_data_dir(tmp_path, monkeypatch):
    """A data directory the CLI uses through MEMLANE_DATA_DIR (not created yet), with no server or
    organization set in the environment."""
    monkeypatch.delenv("MEMLANE_API_URL", raising=False)
    monkeypatch.delenv("MEMLANE_ORG", raising=False)
    path = tmp_path / "data"
    monkeypatch.setenv("MEMLANE_DATA_DIR", str(path))
    return path


@pytest.fixture
def cli_hashing(monkeypatch):
    """The CLI's local runtime with the hashing embedder (no model to load)."""
    import memlane.cli.common as common
    import memlane.cli.transfer as transfer

    real = common.local_runtime

    def runtime(args, **options):
        options.setdefault("embedder", HashEmbedder())
        return real(args, **options)

    monkeypatch.setattr(common, "local_runtime", runtime)
    monkeypatch.setattr(transfer, "local_runtime", runtime)
