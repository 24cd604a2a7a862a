"""Finding 3, the other half: OCR and transcription time is counted per organization, and work over
an organization's daily budget is deferred (queued, and left for the next day by the worker), never
failed, and never charged to another organization."""

from __future__ import annotations

import base64
import io
from dataclasses import replace

import pytest
from crafted_pdf import pdf_with_pictures_in_forms
from fakes import FixedClock, HashEmbedder
from PIL import Image, ImageDraw

from memlane.config import Settings
from memlane.documents.media import OCR_SECONDS_PER_PAGE
from memlane.documents.media_budget import CacheMediaBudget
from memlane.domain.models import DocumentStatus
from memlane.domain.principal import Principal
from memlane.domain.requests import MemoryIn
from memlane.local.compose import build_local
from memlane.local.worker import IngestWorker
from memlane.ports import MediaReaders
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


# --------------------------------------------------- issue 34, finding 3: reserved before, settled after


class BudgetWatchingReader(CountingReader):
    """Records what the organization had spent while each page was being read."""

    def __init__(self, world_ref: list, org_id: str, fail: bool = False) -> None:
        super().__init__()
        self.world_ref, self.org_id, self.fail = world_ref, org_id, fail
        self.spent_while_reading: list[float] = []

    def read_text(self, png: bytes) -> str:
        svc = self.world_ref[0].services
        self.spent_while_reading.append(CacheMediaBudget(svc.cache).spent(self.org_id, "ocr_seconds", svc.clock.now()))
        if self.fail:
            raise RuntimeError("the OCR engine crashed")
        return super().read_text(png)


def scan(pages: int) -> str:
    return base64.b64encode(pdf_with_pictures_in_forms(pages, 400, 300)).decode()


@pytest.fixture
def watched(tmp_path):
    """A 60-second daily OCR budget and a reader that sees the budget while it reads."""
    ref: list = []

    def make(fail: bool = False):
        stack = build_local(Settings(data_dir=tmp_path / f"w{len(ref)}", media_ocr_seconds_per_day=60),
                            embedder=HashEmbedder(), media_readers=(None, None))
        org, _ = ensure_organization(stack.metadata, "reader")
        reader = BudgetWatchingReader(ref, org.id, fail)
        stack.services = replace(stack.services, clock=FixedClock(), media=MediaReaders(ocr=reader))
        ref.append(stack)
        return stack, reader, Principal(organization_id=org.id, key_id="k")

    yield make
    for s in ref:
        s.close()


def test_the_estimate_is_reserved_while_reading_and_settled_after(watched):
    stack, reader, who = watched()
    svc = stack.services
    budget = CacheMediaBudget(svc.cache)
    budget.charge(who.organization_id, "ocr_seconds", 40, svc.clock.now())
    out = save_memory(svc, who, MemoryIn(content=scan(3), content_type="pdf"))
    assert out.status == DocumentStatus.READY and reader.pages == 3
    # while the 3 pages were read, their estimate (2 s a page) was already counted
    assert reader.spent_while_reading[0] == pytest.approx(40 + 3 * OCR_SECONDS_PER_PAGE)
    # after, only what the reading took is: the rest of the reservation is given back
    after = budget.spent(who.organization_id, "ocr_seconds", svc.clock.now())
    assert 40 < after < 40 + 3 * OCR_SECONDS_PER_PAGE


def test_work_that_does_not_fit_what_is_left_waits_instead_of_running_past_the_budget(watched):
    stack, reader, who = watched()
    svc = stack.services
    # 55 of 60 seconds spent: a 4-page scan (about 8 s) no longer fits, though 55 < 60
    CacheMediaBudget(svc.cache).charge(who.organization_id, "ocr_seconds", 55, svc.clock.now())
    out = save_memory(svc, who, MemoryIn(content=scan(4), content_type="pdf"))
    assert out.status == DocumentStatus.QUEUED and reader.pages == 0


def test_the_worker_defers_a_reading_its_reservation_refuses(watched):
    stack, reader, who = watched()
    svc = stack.services
    out = save_memory(svc, who, MemoryIn(content=scan(6), content_type="pdf"))  # over the inline 4: queued
    assert out.status == DocumentStatus.QUEUED
    # 50 of 60 spent: the worker's first look passes (50 < 60), the reservation of 12 s does not
    CacheMediaBudget(svc.cache).charge(who.organization_id, "ocr_seconds", 50, svc.clock.now())
    IngestWorker(svc, stack.queue).run_once()
    doc = get_document(svc, who, out.id)
    assert doc.status == DocumentStatus.QUEUED and "deferred" in (doc.status_reason or "") and reader.pages == 0
    svc.clock.advance(days=1)
    IngestWorker(svc, stack.queue).drain()
    assert get_document(svc, who, out.id).status == DocumentStatus.READY and reader.pages == 6


def test_a_reading_that_fails_gives_its_reservation_back(watched):
    stack, reader, who = watched(fail=True)
    svc = stack.services
    with pytest.raises(RuntimeError):
        save_memory(svc, who, MemoryIn(content=scan(2), content_type="pdf"))
    spent = CacheMediaBudget(svc.cache).spent(who.organization_id, "ocr_seconds", svc.clock.now())
    assert reader.spent_while_reading == [pytest.approx(2 * OCR_SECONDS_PER_PAGE)]
    assert spent < OCR_SECONDS_PER_PAGE  # the time it ran, not the 4 s reserved
