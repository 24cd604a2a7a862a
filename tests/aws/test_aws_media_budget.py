"""Finding 3 on AWS: Textract pages and Transcribe minutes are counted per organization and day
through the media budget port, on the deployment's DynamoDB cache table (moto)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from memlane.adapters.aws.cache import DynamoCache
from memlane.documents.media_budget import CacheMediaBudget

NOW = datetime(2026, 11, 25, 20, 0, tzinfo=UTC)


def test_textract_pages_and_transcribe_minutes_are_counted_per_organization_and_day(dynamodb: Any) -> None:
    budget = CacheMediaBudget(DynamoCache("memlane-test", client=dynamodb))
    budget.charge("org-a", "textract_pages", 12, NOW)
    budget.charge("org-a", "textract_pages", 3, NOW + timedelta(minutes=5))
    budget.charge("org-a", "transcribe_minutes", 2.5, NOW)
    budget.charge("org-b", "textract_pages", 1, NOW)
    assert budget.spent("org-a", "textract_pages", NOW) == 15
    assert budget.spent("org-a", "transcribe_minutes", NOW) == 2.5
    assert budget.spent("org-b", "textract_pages", NOW) == 1
    # a new UTC day starts from zero
    assert budget.spent("org-a", "textract_pages", NOW + timedelta(hours=5)) == 0
