"""Organizations and their API keys in the metadata table (memlane.ports.OrganizationStore).

An organization is two items, its record (pk=ORG#{org}) and its slug's (pk=ORGSLUG#{slug}), put
together in one transaction so a slug names one organization. An API key is found by the SHA-256
of its secret (pk=KEY#{hash}: the authorizer's one GetItem), listed per organization through GSI1,
and revoked by id through a pointer item (pk=KEYID#{id}).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from botocore.exceptions import ClientError

from memlane.adapters.aws import dynamo_schema as ks
from memlane.adapters.aws._boto import error_code
from memlane.adapters.aws.dynamo_codec import (
    conditional_put,
    model_attributes,
    model_from_item,
    serialize,
    to_iso,
)
from memlane.adapters.aws.dynamo_table import DynamoTable, _key
from memlane.domain.models import ApiKey, Organization


class DynamoOrganizationStore(DynamoTable):
    """OrganizationStore on the metadata table."""

    def create_organization(self, org: Organization) -> Organization:
        org_item = {
            ks.PK: ks.org_pk(org.id),
            ks.SK: ks.SK_ORG,
            "entity": "organization",
            **model_attributes(org),
        }
        slug_item = {ks.PK: ks.org_slug_pk(org.slug), ks.SK: ks.SK_ORG_SLUG, "organization_id": org.id}
        self._transact(
            [
                conditional_put(self.table_name, org_item),
                conditional_put(self.table_name, slug_item),
            ],
            conflict=f"organization slug '{org.slug}' or id already exists",
        )
        return org

    def get_organization(self, org_id: str) -> Organization | None:
        item = self._get(ks.org_pk(org_id), ks.SK_ORG)
        return model_from_item(Organization, item) if item else None

    def find_organization_by_slug(self, slug: str) -> Organization | None:
        item = self._get(ks.org_slug_pk(slug), ks.SK_ORG_SLUG)
        return self.get_organization(item["organization_id"]["S"]) if item else None

    def put_api_key(self, key: ApiKey) -> None:
        key_item = {
            ks.PK: ks.key_pk(key.key_hash),
            ks.SK: ks.SK_KEY,
            "entity": "api_key",
            ks.GSI1_PK: ks.org_keys_gsi_pk(key.organization_id),
            ks.GSI1_SK: to_iso(key.created_at),
            **model_attributes(key),
        }
        id_item = {ks.PK: ks.key_id_pk(key.id), ks.SK: ks.SK_KEY_ID, "key_hash": key.key_hash}
        # Re-putting the same key (e.g. a new rate limit) is allowed; another key with the same
        # hash is not.
        self._transact(
            [
                {
                    "Put": {
                        "TableName": self.table_name,
                        "Item": serialize(key_item),
                        "ConditionExpression": "attribute_not_exists(pk) OR #id = :id",
                        "ExpressionAttributeNames": {"#id": "id"},
                        "ExpressionAttributeValues": {":id": {"S": key.id}},
                    }
                },
                {"Put": {"TableName": self.table_name, "Item": serialize(id_item)}},
            ],
            conflict="an API key with this hash already exists",
        )

    def find_api_key_by_hash(self, key_hash: str) -> ApiKey | None:
        item = self._get(ks.key_pk(key_hash), ks.SK_KEY)
        return model_from_item(ApiKey, item) if item else None

    def list_api_keys(self, org_id: str | None = None) -> list[ApiKey]:
        if org_id is not None:
            items: Iterable[dict[str, Any]] = self._query(
                IndexName=ks.GSI1,
                KeyConditionExpression="gsi1pk = :pk",
                ExpressionAttributeValues={":pk": {"S": ks.org_keys_gsi_pk(org_id)}},
            )
        else:
            # Every organization's keys: an operator's listing (CLI), rare enough for a Scan.
            items = self._scan(
                FilterExpression="sk = :sk AND begins_with(pk, :prefix)",
                ExpressionAttributeValues={":sk": {"S": ks.SK_KEY}, ":prefix": {"S": "KEY#"}},
            )
        keys = [model_from_item(ApiKey, item) for item in items]
        return sorted(keys, key=lambda k: (k.created_at, k.id))

    def revoke_api_key(self, key_id: str, when: datetime) -> bool:
        pointer = self._get(ks.key_id_pk(key_id), ks.SK_KEY_ID)
        if pointer is None:
            return False
        try:
            # if_not_exists keeps the first revocation time when a key is revoked twice.
            self._call(
                "update_item",
                TableName=self.table_name,
                Key=_key(ks.key_pk(pointer["key_hash"]["S"]), ks.SK_KEY),
                UpdateExpression="SET revoked_at = if_not_exists(revoked_at, :when)",
                ConditionExpression="attribute_exists(pk)",
                ExpressionAttributeValues={":when": {"S": to_iso(when)}},
            )
        except ClientError as exc:
            if error_code(exc) == "ConditionalCheckFailedException":
                return False
            raise
        return True
