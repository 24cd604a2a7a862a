"""Every 15 minutes (EventBridge Scheduler): one sync-queue message per connection that is due
(active and not synced for 15 minutes, asked to sync, or out of a provider's backoff; or being
deleted). The sync function does the work, one connection per message. Idempotent: a schedule
firing twice sends a connection twice, and the second message finds the lease taken or nothing
new; a missed run is caught up by the next, since "due" is computed from each connection's state."""

from __future__ import annotations

from typing import Any

from functions._handler import compose_services, lambda_handler, logger
from functions.schedule import ScheduledJob
from memlane.adapters.aws.sync_queue import SqsSyncDispatcher, SyncMessage
from memlane.connections.sync import due_connections
from memlane.lazy import Lazy
from memlane.ports import Services

_services: Lazy[Services] = Lazy(compose_services, "Services")


@lambda_handler(correlation_id_path="execution_id")
def handler(event: dict[str, Any], context: Any, services: Services | None = None) -> dict[str, Any]:
    services = services or _services.get()
    job = ScheduledJob.model_validate(event)
    due = due_connections(services)
    dispatcher = services.connections.dispatcher if services.connections else None
    if not isinstance(dispatcher, SqsSyncDispatcher):
        raise RuntimeError("the schedule function needs the sync queue (MEMLANE_SYNC_QUEUE_URL)")
    sent = dispatcher.send_many([SyncMessage(organization_id=c.organization_id, connection_id=c.id) for c in due])
    logger.info("connection schedule done", extra={"scheduled_time": job.scheduled_time, "due": len(due)})
    return {"job": job.job, "scheduled_time": job.scheduled_time, "due": len(due), "sent": sent}
