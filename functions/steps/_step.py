"""What every ingestion step function shares: the task input model, the one handler decorator
(functions._handler), and the one call into memlane.documents.workflow. The state machine stores
the returned dict at $.artifacts.<step> (infra/constructs/ingestion.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from functions._handler import compose_services, lambda_handler, logger
from memlane.documents.workflow import StepInput
from memlane.lazy import Lazy
from memlane.ports import Services

_services: Lazy[Services] = Lazy(compose_services, "Services")

Handler = Callable[[dict[str, Any], Any], dict[str, Any]]


def step_handler(step: Callable[[Services, StepInput], BaseModel]) -> Handler:
    """The Lambda handler of one step. Errors propagate with their class names, which the state
    machine's Retry (TransientError, DependencyUnavailableError) and Catch (everything) match."""

    @lambda_handler(correlation_id_path="execution")
    def handler(event: dict[str, Any], context: Any, services: Services | None = None) -> dict[str, Any]:
        services = services or _services.get()
        inp = StepInput.model_validate(event)
        logger.append_keys(document_id=inp.document.document_id, step=inp.step)
        result = step(services, inp)
        logger.info("step done", extra={"result": result.model_dump(mode="json", exclude_none=True)})
        return result.model_dump(mode="json", exclude_none=True)

    return handler
