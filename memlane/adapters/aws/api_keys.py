"""The gateway's record of memlane's keys: one API Gateway API key per memlane key, attached to
the per-key usage plan. Its value is the SHA-256 of the memlane key, which the authorizer returns
as `usageIdentifierKey`, so API Gateway throttles and counts each memlane key separately.

The API Gateway key id is kept on memlane's key item (attribute `gateway_key_id` of KEY#{hash}),
so revoking finds it without listing API Gateway's keys.

Every key is created with the tag `memlane:stage` = the stack's stage: the functions' IAM policies
allow creating keys only with that tag and deleting only keys that carry it (infra/constructs/api.py),
so a function can never delete an API key of another stack or of anything else in the account.
"""

from __future__ import annotations

from typing import Any

from botocore.exceptions import ClientError

from memlane.adapters.aws import dynamo_schema as ks
from memlane.adapters.aws._boto import call, error_code, lazy_client
from memlane.domain.errors import DependencyUnavailableError
from memlane.domain.models import ApiKey

GATEWAY_KEY_ATTRIBUTE = "gateway_key_id"
API_KEY_STAGE_TAG = "memlane:stage"


class ApiGatewayKeyRegistry:
    def __init__(self, usage_plan_id: str | None, table_name: str, *, usage_plan_name: str | None = None,
                 stage: str = "", apigateway: Any | None = None, dynamodb: Any | None = None) -> None:
        if not usage_plan_id and not usage_plan_name:
            raise ValueError("usage_plan_id or usage_plan_name is required")
        self._usage_plan_id = usage_plan_id
        self.usage_plan_name = usage_plan_name
        self.table_name = table_name
        self.tags = {API_KEY_STAGE_TAG: stage} if stage else {}
        self.apigateway = lazy_client(apigateway, "apigateway")
        self.dynamodb = lazy_client(dynamodb, "dynamodb")

    @property
    def usage_plan_id(self) -> str:
        """Given, or found by name on first use (the API function's plan is deployed after it, so
        the stack can only tell it the name)."""
        if not self._usage_plan_id:
            self._usage_plan_id = self._find_plan(str(self.usage_plan_name))
        return self._usage_plan_id

    def _find_plan(self, name: str) -> str:
        kwargs: dict[str, Any] = {"limit": 500}
        while True:
            page = self._call(self.apigateway, "get_usage_plans", **kwargs)
            for plan in page.get("items", []):
                if plan.get("name") == name:
                    return str(plan["id"])
            if not page.get("position"):
                raise DependencyUnavailableError(f"usage plan {name!r} not found: is the stack deployed?")
            kwargs["position"] = page["position"]

    def _call(self, client: Any, operation: str, **kwargs: Any) -> Any:
        return call(client, operation, client.meta.service_model.service_name, **kwargs)

    def register(self, key: ApiKey) -> str:
        created = self._call(
            self.apigateway, "create_api_key",
            name=f"memlane-{key.id}", description=f"memlane key {key.prefix}… of organization "
            f"{key.organization_id}", enabled=True, value=key.key_hash, **({"tags": self.tags} if self.tags else {}),
        )
        gateway_id = str(created["id"])
        try:
            self._call(self.apigateway, "create_usage_plan_key", usagePlanId=self.usage_plan_id,
                       keyId=gateway_id, keyType="API_KEY")
            self._call(
                self.dynamodb, "update_item", TableName=self.table_name,
                Key={ks.PK: {"S": ks.key_pk(key.key_hash)}, ks.SK: {"S": ks.SK_KEY}},
                UpdateExpression=f"SET {GATEWAY_KEY_ATTRIBUTE} = :id",
                ConditionExpression="attribute_exists(pk)",
                ExpressionAttributeValues={":id": {"S": gateway_id}},
            )
        except Exception:
            self._delete(gateway_id)
            raise
        return gateway_id

    def deregister(self, key_id: str) -> None:
        gateway_id = self.gateway_key_id(key_id)
        if gateway_id:
            self._delete(gateway_id)

    def gateway_key_id(self, key_id: str) -> str | None:
        pointer = self._get(ks.key_id_pk(key_id), ks.SK_KEY_ID)
        if pointer is None:
            return None
        item = self._get(ks.key_pk(pointer["key_hash"]["S"]), ks.SK_KEY)
        value = (item or {}).get(GATEWAY_KEY_ATTRIBUTE, {}).get("S")
        return str(value) if value else None

    def _get(self, pk: str, sk: str) -> dict[str, Any] | None:
        return self._call(self.dynamodb, "get_item", TableName=self.table_name,
                          Key={ks.PK: {"S": pk}, ks.SK: {"S": sk}}, ConsistentRead=True).get("Item")

    def _delete(self, gateway_id: str) -> None:
        try:
            self._call(self.apigateway, "delete_api_key", apiKey=gateway_id)
        except ClientError as exc:
            if error_code(exc) != "NotFoundException":  # already gone: deleting twice is fine
                raise
