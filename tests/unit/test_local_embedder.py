"""The local embedder: all-MiniLM-L6-v2 exported to ONNX once, run on ONNX Runtime.

What a user relies on: the vectors are sentence-transformers' vectors (so existing data directories
stay valid), the export happens once per machine and never again, a recall never waits behind a
save's or a crawl's embedding batch, and a changed representation cannot mix with the old one.
"""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest

from memlane.adapters.local import minilm_onnx
from memlane.adapters.local.embedder import MiniLMEmbedder, usable_cores

TEXTS = [
    "hello",
    "",
    "   surrounded by spaces   ",
    "How do I sort a list of dictionaries by a key?",
    "def area(r):\n    return 3.14159 * r ** 2",
    "Ünïcödé façade, 東京 and 🙂",
    "a long chunk that the model truncates at 256 word pieces " * 40,
]


# ------------------------------------------------------------------ the cache (no model involved)


@pytest.fixture
def fake_export(monkeypatch):
    """An export that writes a small file and counts its calls: the cache logic without torch."""
    calls: list[str] = []

    def export(model, variant, work: Path) -> Path:
        calls.append(variant)
        out = work / "model.onnx"
        out.write_bytes(f"onnx {variant}".encode())
        return out

    monkeypatch.setattr(minilm_onnx, "export", export)
    return calls


def test_the_export_runs_once_and_later_loads_open_the_cached_file(tmp_path, fake_export):
    # Given an empty cache directory
    cache = tmp_path / "models"
    # When the model is asked for twice
    first = minilm_onnx.onnx_model("fp32", cache)
    second = minilm_onnx.onnx_model("fp32", cache)
    # Then it was exported once, into the cache, with nothing else left behind
    assert fake_export == ["fp32"]
    assert first == second and first.read_bytes() == b"onnx fp32"
    assert [p.name for p in cache.iterdir()] == [first.name]


def test_each_variant_and_recipe_gets_its_own_file(tmp_path, fake_export, monkeypatch):
    cache = tmp_path / "models"
    fp32 = minilm_onnx.onnx_model("fp32", cache)
    int8 = minilm_onnx.onnx_model("int8", cache)
    # When the export recipe changes, the old file is not opened
    monkeypatch.setattr(minilm_onnx, "RECIPE", minilm_onnx.RECIPE + 1)
    newer = minilm_onnx.onnx_model("fp32", cache)
    assert len({fp32, int8, newer}) == 3
    assert fake_export == ["fp32", "int8", "fp32"]


def test_an_unwritable_cache_still_gives_a_model(tmp_path, fake_export):
    # Given a cache path under a regular file (cannot be created)
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    # When the model is asked for, it comes back as bytes instead of a path
    model = minilm_onnx.onnx_model("fp32", blocker / "models")
    assert model == b"onnx fp32"


def test_a_failed_export_leaves_nothing_in_the_cache(tmp_path, monkeypatch):
    def export(model, variant, work: Path) -> Path:
        (work / "raw.onnx").write_bytes(b"half written")
        raise minilm_onnx.ModelExportError("disagrees with torch")

    monkeypatch.setattr(minilm_onnx, "export", export)
    cache = tmp_path / "models"
    with pytest.raises(minilm_onnx.ModelExportError):
        minilm_onnx.onnx_model("fp32", cache)
    assert list(cache.iterdir()) == []


def test_an_unknown_variant_is_refused():
    with pytest.raises(ValueError, match="variant"):
        MiniLMEmbedder("fp16")


def test_each_window_is_its_own_representation():
    # 256 word pieces is what sentence-transformers reads: that id stays the one of older data
    assert MiniLMEmbedder(window=256).id == "local/all-MiniLM-L6-v2/384"
    assert MiniLMEmbedder(window=128).id == "local/all-MiniLM-L6-v2-w128/384"
    assert MiniLMEmbedder("int8", window=128).id == "local/all-MiniLM-L6-v2-int8-w128/384"
    with pytest.raises(ValueError, match="window"):
        MiniLMEmbedder(window=512)


def test_the_model_cache_is_where_the_host_was_told(tmp_path):
    from memlane.config import Settings
    from memlane.config.local import LocalSettings
    from memlane.local.compose import make_embedder

    explicit = LocalSettings.from_env({"MEMLANE_MODEL_CACHE": str(tmp_path / "explicit"),
                                       "XDG_CACHE_HOME": str(tmp_path / "xdg")})
    assert explicit.models_dir == tmp_path / "explicit"
    xdg = LocalSettings.from_env({"XDG_CACHE_HOME": str(tmp_path / "xdg")})
    assert xdg.models_dir == tmp_path / "xdg" / "memlane" / "models"
    assert LocalSettings.from_env({}).models_dir == Path.home() / ".cache" / "memlane" / "models"
    # and the local embedder the host composes exports its model there
    assert make_embedder(Settings(embedder="local"), xdg.models_dir).cache_dir == xdg.models_dir


# ------------------------------------------------------------------ the real model


@pytest.mark.slow
def test_vectors_are_sentence_transformers_vectors(minilm):
    # Given the reference implementation on torch
    from memlane.adapters.local.embedder_torch import MiniLMTorchEmbedder

    reference = np.array(MiniLMTorchEmbedder().embed_documents(TEXTS))
    # When the ONNX embedder embeds the same texts, in one batch and as queries
    documents = np.array(minilm.embed_documents(TEXTS))
    queries = np.array([minilm.embed_query(t) for t in TEXTS])
    # Then they are the same vectors (so they share the embedder id), unit length
    assert np.abs(documents - reference).max() < 1e-5
    assert np.abs(queries - reference).max() < 1e-5
    assert np.allclose(np.linalg.norm(documents, axis=1), 1.0, atol=1e-5)
    assert minilm.id == MiniLMTorchEmbedder().id == "local/all-MiniLM-L6-v2/384"


@pytest.mark.slow
def test_similar_texts_are_close_and_unrelated_ones_are_not(minilm):
    cat, kitten, tax = np.array(minilm.embed_documents(
        ["The cat sat on the mat.", "A kitten was sitting on the rug.", "Quarterly VAT returns are due."]))
    assert cat @ kitten > 0.5 > cat @ tax


@pytest.mark.slow
def test_a_query_never_waits_for_a_document_batch(minilm, monkeypatch):
    # Given a document batch that is inside its session and will not finish until released
    minilm.load()
    inside, release = threading.Event(), threading.Event()
    real = minilm._documents.session

    class HeldSession:
        def run(self, *args, **kwargs):
            inside.set()
            release.wait()
            return real.run(*args, **kwargs)

    monkeypatch.setattr(minilm._documents, "session", HeldSession())
    saving = threading.Thread(target=minilm.embed_documents, args=(["a save's chunk"],))
    saving.start()
    try:
        assert inside.wait(60), "the document batch never started"
        # When a query is embedded meanwhile
        result: list[list[float]] = []
        querying = threading.Thread(target=lambda: result.append(minilm.embed_query("where is it")))
        querying.start()
        querying.join(60)
        # Then it completed while the batch was still held: the paths share no lock
        assert not querying.is_alive() and len(result[0]) == 384
        assert saving.is_alive()
    finally:
        release.set()
        saving.join(60)


@pytest.mark.slow
def test_the_two_paths_ask_for_cores_plus_one_threads_and_never_spin(minilm):
    minilm.load()
    documents = minilm._documents.session.get_session_options()
    query = minilm._query.session.get_session_options()
    assert documents.intra_op_num_threads == usable_cores()
    assert query.intra_op_num_threads == 1
    for options in (documents, query):
        assert options.get_session_config_entry("session.intra_op.allow_spinning") == "0"


@pytest.mark.slow
def test_the_export_is_checked_against_torch(minilm):
    # Given the cached model and a "torch model" that disagrees with it
    import torch

    model = minilm_onnx.PackagedModel.locate()
    path = minilm_onnx.onnx_model("fp32")

    def wrong(input_ids, attention_mask, token_type_ids):
        return torch.nn.functional.normalize(torch.ones(input_ids.shape[0], 384), dim=1)

    # When it is verified, the export is refused
    with pytest.raises(minilm_onnx.ModelExportError, match="disagrees"):
        minilm_onnx._verify(model, wrong, path, "fp32")


@pytest.mark.slow
def test_a_changed_embedder_is_refused_until_reindex_migrates(tmp_path, monkeypatch, minilm):
    from memlane.cli import main
    from memlane.config import Settings
    from memlane.domain.errors import EmbedderMismatchError
    from memlane.domain.principal import Principal
    from memlane.domain.requests import MemoryIn, RecallIn
    from memlane.ingest.summarize import LocalSummarizer
    from memlane.local.compose import build_local
    from memlane.recall.service import recall
    from memlane.services.keys import ensure_organization
    from memlane.services.memory import save_memory

    data = tmp_path / "data"

    def open_stack(embedder):
        stack = build_local(Settings(data_dir=data), embedder=embedder, summarizer=LocalSummarizer())
        org, _ = ensure_organization(stack.metadata, "acme")
        return stack, Principal(organization_id=org.id, key_id="k")

    # Given a data directory indexed with the default (fp32) embedder
    stack, who = open_stack(minilm)
    first = save_memory(stack.services, who, MemoryIn(content="The staging database listens on port 5433."))
    stack.close()
    # When the int8 embedder (another representation, another id) saves into it, it is refused
    int8 = MiniLMEmbedder("int8")
    assert int8.id == "local/all-MiniLM-L6-v2-int8/384" != minilm.id
    stack, who = open_stack(int8)
    with pytest.raises(EmbedderMismatchError, match="memlane reindex"):
        save_memory(stack.services, who, MemoryIn(content="Deploys happen on Tuesdays."))
    stack.close()
    # When `memlane reindex` runs with the int8 embedder
    monkeypatch.setenv("MEMLANE_EMBEDDER", "local-int8")
    assert main(["reindex", "--data-dir", str(data)]) == 0
    # Then the index and the document are int8's, recall finds the memory, and saves work again
    stack, who = open_stack(int8)
    assert stack.index.embedder_id() == int8.id
    assert stack.metadata.get_document(who.organization_id, first.id).embedder == int8.id
    found = recall(stack.services, who, RecallIn(query="which port does staging's database use", limit=3))
    assert found.results[0].document_id == first.id
    save_memory(stack.services, who, MemoryIn(content="Deploys happen on Tuesdays."))
    stack.close()
    # and the old embedder is the one refused now
    stack, who = open_stack(minilm)
    with pytest.raises(EmbedderMismatchError):
        save_memory(stack.services, who, MemoryIn(content="Backups run nightly."))
    stack.close()


@pytest.mark.slow
def test_a_window_reads_that_many_word_pieces_and_short_texts_are_unchanged(minilm):
    # Given the 128-word-piece window beside the model's 256
    short = MiniLMEmbedder(window=128)
    wide = MiniLMEmbedder(window=256)
    head = "The staging database listens on port 5433 and backups run nightly. " * 6
    tail = " ".join(f"unrelated{i} filler about gardening and tomatoes" for i in range(60))
    tokenizer = minilm_onnx.load_tokenizer(minilm_onnx.PackagedModel.locate(), padding=False)
    # When a text longer than both windows is embedded
    text = head + tail
    narrow_vec = np.array(short.embed_documents([text])[0])
    wide_vec = np.array(wide.embed_documents([text])[0])
    # Then the narrow window's vector is the one of the text's first 128 word pieces alone
    ids = tokenizer.encode(text).ids[1:127]  # without [CLS]/[SEP]
    first = tokenizer.decode(ids)
    assert float(narrow_vec @ np.array(short.embed_documents([first])[0])) > 0.999
    assert float(narrow_vec @ wide_vec) < 0.99  # the wide window read the gardening too
    # and a short text (a query, a note) gets the same vector from both windows
    note = "Which port does the staging database listen on?"
    assert np.abs(np.array(short.embed_query(note)) - np.array(wide.embed_query(note))).max() < 1e-6
