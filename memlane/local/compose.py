"""Composition of the embedded default: SQLite stores, the local (or OpenAI) models."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memlane.adapters.idempotency import PowertoolsIdempotency
from memlane.adapters.local.blob_store import SqliteBlobStore
from memlane.adapters.local.cache import SqliteCache
from memlane.adapters.local.connection_store import SqliteConnectionStore
from memlane.adapters.local.idempotency import SqliteIdempotencyLayer
from memlane.adapters.local.job_queue import SqliteJobQueue
from memlane.adapters.local.metadata_store import SqliteMetadataStore
from memlane.adapters.local.private_files import private_dir
from memlane.adapters.local.search_index import SqliteSearchIndex
from memlane.adapters.local.sqlite_db import SqliteDatabase
from memlane.adapters.local.token_vault import FileTokenVault
from memlane.config import DEFAULT_PORT, Settings
from memlane.config.apps import ConnectionApps
from memlane.config.local import LocalSettings
from memlane.connections.apps import static_apps
from memlane.domain.models import Document
from memlane.ingest.summarize import LocalSummarizer
from memlane.local import index_rules
from memlane.observability import CountingMetrics
from memlane.ports import ConnectionPorts, RateLimiter, SearchIndex, Services, SyncDispatcher

log = logging.getLogger(__name__)

DB_FILE = "memlane.sqlite3"


def make_embedder(settings: Settings, models_dir: Path | None = None):
    """`MEMLANE_EMBEDDER`: auto (OpenAI when a key is set, else local) | openai | local (MiniLM
    on ONNX Runtime) | local-int8 (the same, weights quantized: its own embedder id) |
    local-torch (MiniLM through sentence-transformers: the same vectors and id as local).
    `bedrock` is the AWS stack's: a shell set up for `--aws` commands keeps the local model here.
    `models_dir`: where the local model's export is kept (LocalSettings.models_dir)."""
    choice = settings.embedder
    if choice == "openai" or (choice == "auto" and settings.openai_api_key):
        from memlane.adapters.openai.embedder import OpenAIEmbedder

        return OpenAIEmbedder(api_key=settings.openai_api_key)
    if choice == "local-torch":
        from memlane.adapters.local.embedder_torch import MiniLMTorchEmbedder

        return MiniLMTorchEmbedder()
    from memlane.adapters.local.embedder import MiniLMEmbedder

    return MiniLMEmbedder("int8" if choice == "local-int8" else "fp32", window=settings.embedder_window,
                          cache_dir=models_dir)


def make_summarizer(settings: Settings, embedder: Any = None):
    """The LLM when a key is configured; else the local summarizer, which re-ranks tags and
    decides entity kinds with the embedder the stack already loaded (MiniLM offline)."""
    if settings.openai_api_key:
        from memlane.adapters.openai.summarizer import OpenAISummarizer

        return OpenAISummarizer(api_key=settings.openai_api_key, fallback=LocalSummarizer(embedder))
    return LocalSummarizer(embedder)


def make_media_readers(settings: Settings, ocr_languages: str = LocalSettings().ocr_languages):
    """(ImageReader, Transcriber): OpenAI when a key is configured (a vision model, the
    transcription API); otherwise Tesseract when it is installed, reading `ocr_languages`
    (MEMLANE_OCR_LANGUAGES), and no transcriber."""
    if settings.openai_api_key:
        from memlane.adapters.openai.media import OpenAITranscriber, OpenAIVisionReader

        return OpenAIVisionReader(api_key=settings.openai_api_key), OpenAITranscriber(api_key=settings.openai_api_key)
    from memlane.adapters.local.tesseract import TesseractReader

    return (TesseractReader(languages=ocr_languages) if TesseractReader.available() else None), None


def make_llm(settings: Settings):
    """The LLM that draws facts from conversations (memlane.conversations), or None (extraction off,
    and answers say so): an OpenAI-compatible endpoint (MEMLANE_LLM_BASE_URL: Ollama, vLLM, LM
    Studio; else OpenAI with OPENAI_API_KEY), or Amazon Bedrock (MEMLANE_LLM=bedrock, AWS credentials)."""
    provider = settings.llm_provider
    if provider == "bedrock":
        from memlane.adapters.aws.bedrock_llm import BedrockLLM

        return BedrockLLM(model_id=settings.llm_model) if settings.llm_model else BedrockLLM()
    if provider == "openai":
        from memlane.adapters.openai.llm import DEFAULT_MODEL, OpenAICompatibleLLM

        return OpenAICompatibleLLM(base_url=settings.llm_base_url, model=settings.llm_model or DEFAULT_MODEL,
                                   api_key=settings.llm_api_key or settings.openai_api_key)
    return None


def build_connection_ports(settings: Settings, db: SqliteDatabase, *, dispatcher: SyncDispatcher | None = None,
                           public_url: str | None = None, apps: ConnectionApps | None = None) -> ConnectionPorts:
    """Connections in the embedded default: SQLite, tokens sealed with a key file in the data
    directory, the OAuth clients the host read from its environment (`apps`, memlane.config.apps).
    The local runtime hands in the dispatcher (its sync runner) and the public URL its server
    listens on; MEMLANE_PUBLIC_URL (Settings.public_url) wins over the latter."""
    return ConnectionPorts(store=SqliteConnectionStore(db), vault=FileTokenVault(settings.data_dir),
                           apps=static_apps(apps or ConnectionApps()), dispatcher=dispatcher,
                           public_url=settings.public_url or public_url
                           or f"http://127.0.0.1:{DEFAULT_PORT}")


@dataclass
class LocalStack:
    db: SqliteDatabase
    services: Services
    queue: SqliteJobQueue
    index: SqliteSearchIndex
    metadata: SqliteMetadataStore
    cache: SqliteCache

    def close(self) -> None:
        # the index's background load and build stop first (they read the database), then it saves
        # the graphs' changes since their last save, so the next start replays fewer rows
        self.index.close()
        self.db.close()


def build_local(settings: Settings, embedder=None, summarizer=None, media_readers=None, *,
                on_enqueued: Callable[[Document | None], object] | None = None,
                background: Callable[..., Any] | None = None, rate_limiter: RateLimiter | None = None,
                connection_dispatcher: SyncDispatcher | None = None, public_url: str | None = None,
                llm: Any = None, local: LocalSettings | None = None, apps: ConnectionApps | None = None,
                search_index: SearchIndex | None = None) -> LocalStack:
    """The stores and models over `settings.data_dir`, and the complete Services in one go.
    The keywords are what a running host adds (memlane.local.runtime): the worker's wake-up, the
    background executor, the rate limiter, the connections' sync runner and public URL, and the
    local parts of the configuration it read (the model cache, OCR's languages, the providers'
    OAuth apps; their defaults when not given). `search_index`: another SearchIndex for the
    services (the tests and the recall suite run the local server over S3 Vectors this way); the
    embedded one is still opened, unused."""
    local = local or LocalSettings()
    private_dir(settings.data_dir)
    db = SqliteDatabase(settings.data_dir / DB_FILE)
    index_rules.settle_on_open(db)
    embedder = embedder or make_embedder(settings, local.models_dir)
    metadata = SqliteMetadataStore(db)
    index = SqliteSearchIndex(db, embedder.dimension, context_weight=settings.context.text_weight)
    queue = SqliteJobQueue(db)
    cache = SqliteCache(db)
    ocr, transcriber = media_readers if media_readers is not None else make_media_readers(settings, local.ocr_languages)
    svc = Services(
        settings=settings,
        metadata=metadata,
        blobs=SqliteBlobStore(db),
        index=search_index if search_index is not None else index,
        embedder=embedder,
        summarizer=summarizer or make_summarizer(settings, embedder),
        queue=queue,
        cache=cache,
        idempotency=PowertoolsIdempotency(lambda: SqliteIdempotencyLayer(db)),
        metrics=CountingMetrics(),
        ocr=ocr,
        transcriber=transcriber,
        connections=build_connection_ports(settings, db, dispatcher=connection_dispatcher, public_url=public_url,
                                           apps=apps),
        on_enqueued=on_enqueued,
        background=background,
        rate_limiter=rate_limiter,
        llm=llm if llm is not None else make_llm(settings),
    )
    return LocalStack(db=db, services=svc, queue=queue, index=index, metadata=metadata, cache=cache)
