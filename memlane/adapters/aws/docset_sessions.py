"""Client sessions of the Mem-Oracle API in the metadata table (pk=ORG#{org},
sk=DOCSESSION#{session}): registering again is a heartbeat."""

from __future__ import annotations

from typing import Any

from memlane.adapters.aws import dynamo_schema as ks
from memlane.adapters.aws.docset_records import n_value, s_value
from memlane.adapters.aws.dynamo_codec import model_from_item
from memlane.adapters.aws.dynamo_table import DynamoTable, _key
from memlane.domain.docsets import ClientSession


class DynamoDocsetSessions(DynamoTable):
    """The session half of DynamoDocsetStore."""

    def put_session(self, session: ClientSession) -> None:
        """Registering again is a heartbeat: connected_at keeps its first value."""
        values: dict[str, Any] = {
            ":id": s_value(session.id),
            ":org": s_value(session.organization_id),
            ":connected": n_value(session.connected_at),
            ":heartbeat": n_value(session.last_heartbeat),
            ":entity": s_value("docset_session"),
        }
        expression = (
            "SET #id = :id, organization_id = :org, entity = :entity, last_heartbeat = :heartbeat,"
            " connected_at = if_not_exists(connected_at, :connected)"
        )
        if session.client_type is None:
            expression += " REMOVE client_type"
        else:
            expression += ", client_type = :client"
            values[":client"] = s_value(session.client_type)
        self._call(
            "update_item",
            TableName=self.table_name,
            Key=_key(ks.org_pk(session.organization_id), ks.docset_session_sk(session.id)),
            UpdateExpression=expression,
            ExpressionAttributeNames={"#id": "id"},
            ExpressionAttributeValues=values,
        )

    def get_session(self, org_id: str, session_id: str) -> ClientSession | None:
        item = self._get(ks.org_pk(org_id), ks.docset_session_sk(session_id))
        return model_from_item(ClientSession, item) if item else None

    def delete_session(self, org_id: str, session_id: str) -> bool:
        response = self._call(
            "delete_item",
            TableName=self.table_name,
            Key=_key(ks.org_pk(org_id), ks.docset_session_sk(session_id)),
            ReturnValues="ALL_OLD",
        )
        return bool(response.get("Attributes"))

    def list_sessions(self, org_id: str) -> list[ClientSession]:
        items = self._query(
            KeyConditionExpression="pk = :pk AND begins_with(sk, :prefix)",
            ExpressionAttributeValues={
                ":pk": s_value(ks.org_pk(org_id)),
                ":prefix": s_value(ks.DOCSET_SESSION_SK_PREFIX),
            },
            ConsistentRead=True,
        )
        sessions = [model_from_item(ClientSession, item) for item in items]
        return sorted(sessions, key=lambda x: (x.connected_at, x.id))
