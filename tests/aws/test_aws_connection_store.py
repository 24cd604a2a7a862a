"""The ConnectionStore contract, for both adapters (SQLite and DynamoDB on moto), and the token
vaults (a key file locally, KMS on moto): tenant scope in every read, a lease that only one sync
holds, OAuth flows good once, sealed secrets bound to their connection."""

from __future__ import annotations

import os
import stat
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from memlane.adapters.aws._boto import new_client
from memlane.adapters.aws.connection_store import DynamoConnectionStore
from memlane.adapters.aws.sync_queue import SqsSyncDispatcher, SyncMessage
from memlane.adapters.aws.token_vault import KmsTokenVault
from memlane.adapters.local.connection_store import SqliteConnectionStore
from memlane.adapters.local.sqlite_db import SqliteDatabase
from memlane.adapters.local.token_vault import KEY_FILE, FileTokenVault
from memlane.domain.connections import (
    Connection,
    ConnectionItem,
    ConnectionStatus,
    PendingAuthorization,
    Provider,
    SyncResult,
)
from memlane.domain.errors import MemlaneError

ORG_A, ORG_B = "org-a", "org-b"
TABLE = "memlane-test"  # the table tests/aws/conftest.py creates
T0 = datetime(2025, 3, 1, 12, 0, 0, tzinfo=UTC)


@pytest.fixture(params=["sqlite", "dynamodb"])
def store(request, tmp_path) -> Any:
    if request.param == "sqlite":
        db = SqliteDatabase(tmp_path / "memlane.sqlite3")
        yield SqliteConnectionStore(db)
        db.close()
    else:
        yield DynamoConnectionStore(TABLE, client=request.getfixturevalue("dynamodb"))


def conn(org: str = ORG_A, **fields: Any) -> Connection:
    return Connection(organization_id=org, provider=Provider.GITHUB, project_id="p1", name="GitHub: a/b",
                      status=ConnectionStatus.ACTIVE, created_at=T0, updated_at=T0, **fields)


def test_connections_are_read_only_within_their_organization(store):
    a, b = conn(ORG_A, options={"repositories": ["a/b"]}), conn(ORG_B)
    store.put_connection(a)
    store.put_connection(b)
    assert store.get_connection(ORG_A, a.id) == a
    assert store.get_connection(ORG_B, a.id) is None, "another organization's connection does not exist for it"
    assert [c.id for c in store.list_connections(ORG_A)] == [a.id]
    assert {c.id for c in store.all_connections()} == {a.id, b.id}
    assert store.find_for_webhook(b.id) == b
    assert store.delete_connection(ORG_B, a.id) is False and store.get_connection(ORG_A, a.id) is not None
    # a saved sync result round-trips
    done = a.model_copy(update={"last_result": SyncResult(added=2, errors=["x: 404"]), "cursor": {"a/b": {"commit": "c1"}}})
    store.put_connection(done)
    assert store.get_connection(ORG_A, a.id).last_result.errors == ["x: 404"]
    assert store.get_connection(ORG_A, a.id).cursor == {"a/b": {"commit": "c1"}}


def test_only_one_sync_holds_the_lease_and_saving_never_drops_it(store):
    c = conn()
    store.put_connection(c)
    held = store.claim(ORG_A, c.id, T0, T0 + timedelta(minutes=20))
    assert held is not None and held.lease_until == T0 + timedelta(minutes=20)
    assert store.claim(ORG_A, c.id, T0 + timedelta(minutes=1), T0 + timedelta(minutes=21)) is None
    # a save while the lease is held (a pause from the API) keeps it
    store.put_connection(c.model_copy(update={"status": ConnectionStatus.PAUSED}))
    assert store.claim(ORG_A, c.id, T0 + timedelta(minutes=2), T0 + timedelta(minutes=22)) is None
    assert store.get_connection(ORG_A, c.id).status == ConnectionStatus.PAUSED
    # an expired lease (a sync that died) can be taken; a released one too
    assert store.claim(ORG_A, c.id, T0 + timedelta(minutes=21), T0 + timedelta(minutes=41)) is not None
    store.release(ORG_A, c.id)
    assert store.claim(ORG_A, c.id, T0 + timedelta(minutes=22), T0 + timedelta(minutes=42)) is not None
    # another organization cannot take it, nor a connection that does not exist
    store.release(ORG_A, c.id)
    assert store.claim(ORG_B, c.id, T0, T0 + timedelta(minutes=1)) is None
    assert store.claim(ORG_A, "missing", T0, T0 + timedelta(minutes=1)) is None


def test_items_are_kept_per_connection_and_go_with_it(store):
    c, other = conn(), conn()
    store.put_connection(c)
    store.put_connection(other)
    long_path = "src/" + "deep/" * 300 + "module.py"  # longer than a DynamoDB sort key may be
    for ext in ("a/b:file:README.md", f"a/b:file:{long_path}"):
        store.put_item(ConnectionItem(connection_id=c.id, organization_id=ORG_A, external_id=ext, document_ids=["d1"],
                                      version="v1", content_hash="h"))
    store.put_item(ConnectionItem(connection_id=other.id, organization_id=ORG_A, external_id="x", version="v"))
    assert store.get_item(c.id, f"a/b:file:{long_path}").document_ids == ["d1"]
    assert [i.external_id for i in store.list_items(c.id)] == sorted(["a/b:file:README.md", f"a/b:file:{long_path}"])
    store.delete_item(c.id, "a/b:file:README.md")
    assert store.get_item(c.id, "a/b:file:README.md") is None
    assert store.delete_connection(ORG_A, c.id) is True
    assert store.list_items(c.id) == [] and store.find_for_webhook(c.id) is None
    assert [i.external_id for i in store.list_items(other.id)] == ["x"]


def test_an_oauth_flow_is_good_once_and_expires(store):
    flow = PendingAuthorization(state_hash="s1", organization_id=ORG_A, connection_id="c1", provider=Provider.NOTION,
                                redirect_uri="http://127.0.0.1:7432/oauth/callback", expires_at=T0 + timedelta(minutes=10))
    store.put_pending(flow)
    assert store.take_pending("s1", T0) == flow
    assert store.take_pending("s1", T0) is None, "used once"
    store.put_pending(flow.model_copy(update={"state_hash": "s2"}))
    assert store.take_pending("s2", T0 + timedelta(minutes=11)) is None, "expired"
    assert store.take_pending("unknown", T0) is None


def test_the_local_vault_keeps_its_key_private_and_binds_secrets_to_their_connection(tmp_path):
    vault = FileTokenVault(tmp_path)
    sealed = vault.seal({"organization_id": ORG_A, "connection_id": "c1"}, b'{"access_token": "at-1"}')
    assert b"at-1" not in sealed.encode() and "at-1" not in sealed
    assert stat.S_IMODE(os.stat(tmp_path / KEY_FILE).st_mode) == 0o600
    assert FileTokenVault(tmp_path).open({"connection_id": "c1", "organization_id": ORG_A}, sealed) == \
        b'{"access_token": "at-1"}'
    with pytest.raises(MemlaneError):
        vault.open({"organization_id": ORG_B, "connection_id": "c1"}, sealed)
    with pytest.raises(MemlaneError):
        FileTokenVault(tmp_path / "elsewhere").open({"organization_id": ORG_A, "connection_id": "c1"}, sealed)
    os.chmod(tmp_path / KEY_FILE, 0o644)
    with pytest.raises(MemlaneError, match="readable by others"):
        FileTokenVault(tmp_path).open({"organization_id": ORG_A, "connection_id": "c1"}, sealed)


def test_the_kms_vault_binds_secrets_to_their_connection(aws):
    kms = new_client("kms")
    key = kms.create_key(Description="memlane connections")["KeyMetadata"]["Arn"]
    vault = KmsTokenVault(key, client=kms)
    context = {"organization_id": ORG_A, "connection_id": "c1"}
    sealed = vault.seal(context, b'{"access_token": "at-1"}')
    assert "at-1" not in sealed and vault.open(context, sealed) == b'{"access_token": "at-1"}'
    with pytest.raises(MemlaneError):
        vault.open({"organization_id": ORG_B, "connection_id": "c1"}, sealed)
    with pytest.raises(MemlaneError, match="over KMS"):
        vault.seal(context, b"x" * 5000)


def test_the_sync_dispatcher_sends_one_message_per_connection(aws):
    sqs = new_client("sqs")
    url = sqs.create_queue(QueueName="memlane-sync")["QueueUrl"]
    dispatcher = SqsSyncDispatcher(url, client=sqs)
    dispatcher.send_many([SyncMessage(organization_id=ORG_A, connection_id=f"c{i}") for i in range(12)])
    dispatcher.request_sync(ORG_B, "c99")
    bodies = []
    while batch := sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages"):
        bodies += [SyncMessage.model_validate_json(m["Body"]) for m in batch]
        sqs.delete_message_batch(QueueUrl=url, Entries=[{"Id": m["MessageId"], "ReceiptHandle": m["ReceiptHandle"]}
                                                        for m in batch])
    assert sorted(m.connection_id for m in bodies) == sorted([f"c{i}" for i in range(12)] + ["c99"])
