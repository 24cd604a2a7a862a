"""The auto-forget sweep (spec §10): documents whose forget_after has passed are removed through the
one removal path, each with a deletion receipt (memlane.documents.receipts)."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime

from memlane import observability
from memlane.documents.receipts import delete_with_receipt
from memlane.ports import Services

log = logging.getLogger(__name__)


@dataclass
class SweepReport:
    forgotten: int = 0
    by_organization: dict[str, int] = field(default_factory=dict)
    started_at: datetime | None = None
    finished_at: datetime | None = None
    receipts: list[str] = field(default_factory=list)  # one deletion receipt per forgotten document
    unverified: list[str] = field(default_factory=list)  # receipts where a store still held something

    def as_dict(self) -> dict:
        return {
            "forgotten": self.forgotten,
            "by_organization": self.by_organization,
            "receipts": len(self.receipts),
            "unverified_receipts": self.unverified,
            "started_at": self.started_at.isoformat() if self.started_at else None,
            "finished_at": self.finished_at.isoformat() if self.finished_at else None,
        }




def forget_expired(svc: Services, now: datetime | None = None, batch: int = 500) -> SweepReport:
    """The auto-forget sweep (spec §10). Idempotent: a second run (a schedule firing twice) finds
    nothing; a missed run is caught up by the next, since it selects by forget_after ≤ now."""
    now = now or svc.clock.now()
    report = SweepReport(started_at=svc.clock.now())
    while True:
        expired = svc.metadata.expired_documents(now, batch)
        if not expired:
            break
        for doc in expired:
            receipt = delete_with_receipt(svc, doc.organization_id, [doc], "auto-forget",
                                          forgotten="forget_after reached")
            report.receipts.append(receipt.id)
            if not receipt.verified:
                report.unverified.append(receipt.id)
            report.forgotten += 1
            report.by_organization[doc.organization_id] = (
                report.by_organization.get(doc.organization_id, 0) + 1
            )
        if len(expired) < batch:
            break
    report.finished_at = svc.clock.now()
    svc.metrics.count(observability.FORGET_SWEEPS)
    if report.forgotten:
        svc.metrics.count(observability.DOCUMENTS_FORGOTTEN, report.forgotten)
        log.info("auto-forget removed %d documents", report.forgotten)
    return report




def forgotten_log(svc: Services, org_id: str, limit: int) -> list[dict]:
    """What the sweep forgot for an organization, newest first: ids, when and why, never content."""
    return list(reversed(svc.metadata.list_forgotten(org_id, limit)))
