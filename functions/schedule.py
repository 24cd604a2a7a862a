"""The payload EventBridge Scheduler sends the jobs (infra/constructs/schedules.py):
{"job": "forget" | "refresh", "scheduled_time": <ISO time>, "execution_id": <id>}."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class ScheduledJob(BaseModel):
    model_config = ConfigDict(extra="ignore")

    job: str
    scheduled_time: str
    execution_id: str = ""
