"""Finding 3, the other half: OCR and transcription time is counted per organization, and work over
an organization's daily budget is deferred (queued, and left for the next day by the worker), never
failed, and never charged to another organization."""

from __future__ import annotations

import base64
import io
from dataclasses import replace

import pytest
from fakes import FixedClock, HashEmbedder
from PIL import Image, ImageDraw

from memlane.config import Settings
from memlane.documents.media_budget import CacheMediaBudget
from memlane.domain.models import DocumentStatus
from memlane.domain.principal import Principal
from memlane.domain.requests import MemoryIn
from memlane.local.compose import build_local
from memlane.local.worker import IngestWorker
from memlane.services.keys import ensure_organization
from memlane.services.memory import get_document, save_memory


class CountingReader:
    id = "counting"

    def __init__(self) -> None:
        self.pages = 0

    def read_text(self, png: bytes) -> str:
        self.pages += 1
        return f"page {self.pages} of the receipts"


def image(text: str) -> str:
    picture = Image.new("RGB", (400, 100), "white")
    ImageDraw.Draw(picture).text((10, 40), text, fill="black")
    out = io.BytesIO()
    picture.save(out, "PNG")
    return base64.b64encode(out.getvalue()).decode()


@pytest.fixture
def world(tmp_path):
    reader = CountingReader()
    stack = build_local(Settings(data_dir=tmp_path / "d", media_ocr_seconds_per_day=60), embedder=HashEmbedder(),
                        media_readers=(reader, None))
    stack.services = replace(stack.services, clock=FixedClock())
    a, _ = ensure_organization(stack.metadata, "spender")
    b, _ = ensure_organization(stack.metadata, "bystander")
    yield stack, reader, Principal(organization_id=a.id, key_id="ka"), Principal(organization_id=b.id, key_id="kb")
    stack.close()


def test_ocr_time_is_charged_to_the_organization(world):
    stack, reader, a, b = world
    save_memory(stack.services, a, MemoryIn(content=image("first"), content_type="image"))
    budget = CacheMediaBudget(stack.services.cache)
    now = stack.services.clock.now()
    assert reader.pages == 1 and budget.spent(a.organization_id, "ocr_seconds", now) > 0
    assert budget.spent(b.organization_id, "ocr_seconds", now) == 0


def test_work_over_the_budget_is_deferred_to_the_next_day_not_failed(world):
    stack, reader, a, b = world
    svc = stack.services
    # Given the spender has used today's OCR budget
    CacheMediaBudget(svc.cache).charge(a.organization_id, "ocr_seconds", 61, svc.clock.now())
    # When it saves an image, nothing is read in the request: it is queued
    out = save_memory(svc, a, MemoryIn(content=image("second"), content_type="image"))
    assert out.status == DocumentStatus.QUEUED and reader.pages == 0
    # And the worker leaves it for tomorrow, queued, not failed
    worker = IngestWorker(svc, stack.queue)
    worker.run_once()
    doc = get_document(svc, a, out.id)
    assert doc.status == DocumentStatus.QUEUED and "deferred" in (doc.status_reason or "") and reader.pages == 0
    # while another organization's image is read at once
    other = save_memory(svc, b, MemoryIn(content=image("third"), content_type="image"))
    assert other.status == DocumentStatus.READY and reader.pages == 1
    # Then the next day it is read and written
    svc.clock.advance(days=1)
    worker.drain()
    assert get_document(svc, a, out.id).status == DocumentStatus.READY and reader.pages == 2
