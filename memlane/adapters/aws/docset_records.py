"""How the docset store's records look in the metadata table (the layout: memlane.adapters.aws.
docset_store): a docset's and a page's item, a page's place in the GSI2 queues, and the small
attribute helpers the store's parts share. Pure functions: no client here."""

from __future__ import annotations

from typing import Any

from botocore.exceptions import ClientError

from memlane.adapters.aws import dynamo_schema as ks
from memlane.adapters.aws._boto import error_code
from memlane.adapters.aws.dynamo_codec import deserialize, model_attributes
from memlane.domain.docsets import Docset, DocsetPage, PageStatus

_CLAIMABLE = (PageStatus.PENDING.value, PageStatus.ERROR.value)


def n_value(value: int) -> dict[str, str]:
    return {"N": str(value)}


def s_value(value: str) -> dict[str, str]:
    return {"S": value}


def conditional_failed(exc: ClientError) -> bool:
    return error_code(exc) == "ConditionalCheckFailedException"


def due_keys(page_id: str, retry_at: int, created_at: int) -> dict[str, str]:
    return {
        ks.GSI2_PK: ks.page_due_gsi_pk(ks.page_shard(page_id)),
        ks.GSI2_SK: f"{ks.epoch_ms_key(retry_at)}#{ks.epoch_ms_key(created_at)}",
    }


def claimed_keys(page_id: str, claimed_at: int) -> dict[str, str]:
    return {
        ks.GSI2_PK: ks.page_claimed_gsi_pk(ks.page_shard(page_id)),
        ks.GSI2_SK: ks.epoch_ms_key(claimed_at),
    }


def queue_keys(page: DocsetPage) -> dict[str, str]:
    """The GSI2 keys a page carries in its state: due, claimed, or none (done, final error)."""
    if page.status.value in _CLAIMABLE and page.retry_at is not None:
        return due_keys(page.id, page.retry_at, page.created_at)
    if page.status == PageStatus.PROCESSING and page.claimed_at is not None:
        return claimed_keys(page.id, page.claimed_at)
    return {}


def page_from_item(item: dict[str, Any]) -> DocsetPage:
    """An absent attribute is None: `retry_at` defaults to 0 (due) in the model, absent means not due."""
    data = deserialize(item)
    return DocsetPage.model_validate({name: data.get(name) for name in DocsetPage.model_fields})


def page_item(page: DocsetPage) -> dict[str, Any]:
    return {
        ks.PK: ks.docset_pages_pk(page.docset_id),
        ks.SK: ks.page_sk(page.id),
        "entity": "docset_page",
        **model_attributes(page),
        **queue_keys(page),
    }


def docset_item(docset: Docset) -> dict[str, Any]:
    return {
        ks.PK: ks.org_pk(docset.organization_id),
        ks.SK: ks.docset_sk(docset.id),
        "entity": "docset",
        ks.GSI1_PK: ks.ALL_DOCSETS_GSI_PK,
        ks.GSI1_SK: f"{ks.epoch_ms_key(docset.created_at)}#{docset.id}",
        **model_attributes(docset),
    }
