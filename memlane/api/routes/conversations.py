"""Conversations, their extractions and the profile: POST /v3/conversations,
GET /v3/extractions/{id}, GET /v3/profile (memlane.conversations, memlane.services.profile)."""

from __future__ import annotations

from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Path, Query
from aws_lambda_powertools.event_handler.router import Router

from memlane.api.auth import principal_of
from memlane.conversations import service as conversations
from memlane.conversations.schemas import ConversationIn, ConversationOut, ExtractionOut
from memlane.domain.requests import UUIDStr
from memlane.ports import Services
from memlane.services.profile import ProfileOut, build_profile

router = Router()


def services() -> Services:
    return router.context["services"]


@router.post(
    "/v3/conversations",
    tags=["conversations"],
    summary="Save a conversation's messages; draw facts from them when an LLM is configured",
    description=(
        "Every message is saved as a memory of the conversation (kind `message`). With an LLM configured, "
        "facts are extracted off the request path (`extraction.status` queued; GET /v3/extractions/{id} follows "
        "it), each reconciled with the facts already known (new, update, duplicate, contradiction) and stored as "
        "a memory of kind `fact`. Without one, `extraction.status` is `off` and says why: no fact is invented."
    ),
    responses={201: {"description": "Messages saved"}},
)
def save_conversation(body: ConversationIn) -> Response[ConversationOut]:
    out: Any = conversations.save_conversation(services(), principal_of(router), body).model_dump(mode="json")
    return Response(status_code=201, content_type="application/json", body=out)


@router.get("/v3/extractions/<extraction_id>", tags=["conversations"],
            summary="An extraction job: its status and every fact it drew, with the decision about each")
def get_extraction(extraction_id: Annotated[UUIDStr, Path()]) -> ExtractionOut:
    return conversations.get_extraction(services(), principal_of(router), extraction_id)


@router.get("/v3/profile", tags=["conversations"],
            summary="Stable facts and recent context for a project, or one person in it")
def get_profile(
    project_id: Annotated[UUIDStr | None, Query()] = None,
    subject: Annotated[str | None, Query(min_length=1, max_length=200)] = None,
) -> ProfileOut:
    svc, who = services(), principal_of(router)
    state = conversations.extraction_state(svc, who.organization_id)
    extraction = "on" if state is None else f"{state.status}: {state.reason}"
    return build_profile(svc, who, project_id, subject.strip() if subject and subject.strip() else None, extraction)
