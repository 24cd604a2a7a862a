"""ConnectionStore on DynamoDB (memlane.ports.connections), in the metadata table (keys in
dynamo_schema.py):

| record      | key                                             | read by                          |
| ----------- | ----------------------------------------------- | -------------------------------- |
| connection  | pk=ORG#{org}  sk=CONN#{id}                      | GetItem (tenant in the key), Query |
|             | GSI1 gsi1pk=CONNS                               | the sync schedule, every org     |
| reference   | pk=CONNREF#{id}  sk=CONNREF                     | a webhook (holds the org)        |
| item        | pk=CONN#{id}  sk=ITEM#{sha256(external id)}     | GetItem, Query of the connection |
| OAuth flow  | pk=OAUTH#{sha256(state)}  sk=OAUTH (TTL)        | DeleteItem returning it: once    |

Records are JSON in a `body` attribute. The sync lease is the `lease_until` attribute (epoch
seconds), written only by the conditional updates of claim and release.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from botocore.exceptions import ClientError

from memlane.adapters.aws import dynamo_schema as ks
from memlane.adapters.aws._boto import error_code
from memlane.adapters.aws.dynamo_table import DynamoTable, _key
from memlane.domain.connections import Connection, ConnectionItem, PendingAuthorization


def _s(value: str) -> dict[str, str]:
    return {"S": value}


def _epoch(dt: datetime) -> dict[str, str]:
    return {"N": f"{dt.timestamp():.6f}"}


def _stamp(dt: datetime) -> str:
    return dt.astimezone(UTC).isoformat(timespec="microseconds")


def _connection(item: dict[str, Any]) -> Connection:
    conn = Connection.model_validate_json(item["body"]["S"])
    lease = item.get("lease_until", {}).get("N")
    return conn.model_copy(update={"lease_until": datetime.fromtimestamp(float(lease), UTC) if lease else None})


class DynamoConnectionStore(DynamoTable):
    # ------------------------------------------------------------------ connections

    def put_connection(self, conn: Connection) -> None:
        body = conn.model_copy(update={"lease_until": None}).model_dump_json()
        self._call("put_item", TableName=self.table_name, Item={
            **_key(ks.connection_ref_pk(conn.id), ks.SK_CONNECTION_REF), "entity": _s("connection-ref"),
            "organization_id": _s(conn.organization_id)})
        self._call(
            "update_item", TableName=self.table_name, Key=_key(ks.org_pk(conn.organization_id), ks.connection_sk(conn.id)),
            UpdateExpression="SET body = :b, entity = :e, #st = :st, organization_id = :o, #g1 = :g1, #g1s = :g1s",
            ExpressionAttributeNames={"#st": "status", "#g1": ks.GSI1_PK, "#g1s": ks.GSI1_SK},
            ExpressionAttributeValues={":b": _s(body), ":e": _s("connection"), ":st": _s(conn.status.value),
                                       ":o": _s(conn.organization_id), ":g1": _s(ks.ALL_CONNECTIONS_GSI_PK),
                                       ":g1s": _s(f"{_stamp(conn.created_at)}#{conn.id}")})

    def get_connection(self, org_id: str, connection_id: str) -> Connection | None:
        item = self._get(ks.org_pk(org_id), ks.connection_sk(connection_id))
        return _connection(item) if item else None

    def list_connections(self, org_id: str) -> list[Connection]:
        items = self._query(KeyConditionExpression="pk = :pk AND begins_with(sk, :p)", ConsistentRead=True,
                            ExpressionAttributeValues={":pk": _s(ks.org_pk(org_id)),
                                                       ":p": _s(ks.CONNECTION_SK_PREFIX)})
        return sorted((_connection(i) for i in items), key=lambda c: (c.created_at, c.id))

    def all_connections(self) -> list[Connection]:
        items = self._query(IndexName=ks.GSI1, KeyConditionExpression="#g = :g",
                            ExpressionAttributeNames={"#g": ks.GSI1_PK},
                            ExpressionAttributeValues={":g": _s(ks.ALL_CONNECTIONS_GSI_PK)})
        return [_connection(i) for i in items]

    def find_for_webhook(self, connection_id: str) -> Connection | None:
        ref = self._get(ks.connection_ref_pk(connection_id), ks.SK_CONNECTION_REF)
        return self.get_connection(ref["organization_id"]["S"], connection_id) if ref else None

    def delete_connection(self, org_id: str, connection_id: str) -> bool:
        existing = self.get_connection(org_id, connection_id)
        if existing is None:
            return False
        items = self._query(KeyConditionExpression="pk = :pk", ProjectionExpression="pk, sk",
                            ExpressionAttributeValues={":pk": _s(ks.connection_items_pk(connection_id))})
        self._batch_write([{"DeleteRequest": {"Key": {ks.PK: i[ks.PK], ks.SK: i[ks.SK]}}} for i in items])
        self._call("delete_item", TableName=self.table_name, Key=_key(ks.org_pk(org_id), ks.connection_sk(connection_id)))
        self._call("delete_item", TableName=self.table_name,
                   Key=_key(ks.connection_ref_pk(connection_id), ks.SK_CONNECTION_REF))
        return True

    def claim(self, org_id: str, connection_id: str, now: datetime, until: datetime) -> Connection | None:
        try:
            answer = self._call(
                "update_item", TableName=self.table_name, Key=_key(ks.org_pk(org_id), ks.connection_sk(connection_id)),
                UpdateExpression="SET lease_until = :until",
                ConditionExpression="attribute_exists(pk) AND (attribute_not_exists(lease_until) OR lease_until <= :now)",
                ExpressionAttributeValues={":until": _epoch(until), ":now": _epoch(now)}, ReturnValues="ALL_NEW")
        except ClientError as exc:
            if error_code(exc) == "ConditionalCheckFailedException":
                return None
            raise
        return _connection(answer["Attributes"])

    def release(self, org_id: str, connection_id: str) -> None:
        try:
            self._call("update_item", TableName=self.table_name,
                       Key=_key(ks.org_pk(org_id), ks.connection_sk(connection_id)),
                       UpdateExpression="REMOVE lease_until", ConditionExpression="attribute_exists(pk)")
        except ClientError as exc:
            if error_code(exc) != "ConditionalCheckFailedException":  # deleted meanwhile: nothing to release
                raise

    # ------------------------------------------------------------------ items

    def put_item(self, item: ConnectionItem) -> None:
        self._call("put_item", TableName=self.table_name, Item={
            **_key(ks.connection_items_pk(item.connection_id), ks.connection_item_sk(item.external_id)),
            "entity": _s("connection-item"), "organization_id": _s(item.organization_id),
            "body": _s(item.model_dump_json())})

    def get_item(self, connection_id: str, external_id: str) -> ConnectionItem | None:
        found = self._get(ks.connection_items_pk(connection_id), ks.connection_item_sk(external_id))
        return ConnectionItem.model_validate_json(found["body"]["S"]) if found else None

    def list_items(self, connection_id: str) -> list[ConnectionItem]:
        items = self._query(KeyConditionExpression="pk = :pk", ConsistentRead=True,
                            ExpressionAttributeValues={":pk": _s(ks.connection_items_pk(connection_id))})
        return sorted((ConnectionItem.model_validate_json(i["body"]["S"]) for i in items), key=lambda i: i.external_id)

    def delete_item(self, connection_id: str, external_id: str) -> None:
        self._call("delete_item", TableName=self.table_name,
                   Key=_key(ks.connection_items_pk(connection_id), ks.connection_item_sk(external_id)))

    # ------------------------------------------------------------------ OAuth flows

    def put_pending(self, pending: PendingAuthorization) -> None:
        self._call("put_item", TableName=self.table_name, Item={
            **_key(ks.oauth_pk(pending.state_hash), ks.SK_OAUTH), "entity": _s("oauth-flow"),
            "body": _s(pending.model_dump_json()), ks.TTL_ATTRIBUTE: {"N": str(int(pending.expires_at.timestamp()))}})

    def take_pending(self, state_hash: str, now: datetime) -> PendingAuthorization | None:
        answer = self._call("delete_item", TableName=self.table_name, Key=_key(ks.oauth_pk(state_hash), ks.SK_OAUTH),
                            ReturnValues="ALL_OLD")
        old = answer.get("Attributes")
        if not old:
            return None
        pending = PendingAuthorization.model_validate_json(old["body"]["S"])
        return pending if pending.expires_at > now else None  # TTL deletion lags: check the time too
