"""Conversations, their extractions and the profile: POST /v3/conversations,
GET /v3/conversations/{id}, GET /v3/extractions/{id}, GET /v3/profile (memlane.conversations, memlane.services.profile)."""

from __future__ import annotations

from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Path, Query
from aws_lambda_powertools.event_handler.router import Router

from memlane.api.auth import principal_of
from memlane.conversations import service as conversations
from memlane.conversations.schemas import (
    ConversationIn,
    ConversationMessagesOut,
    ConversationOut,
    ExtractionOut,
)
from memlane.domain.errors import InvalidInputError
from memlane.domain.requests import MAX_CONVERSATION_ID_CHARS, UUIDStr
from memlane.ports import Services
from memlane.services import idempotency
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
        "a memory of kind `fact`. Without one, `extraction.status` is `off` and says why: no fact is invented. "
        "With an `Idempotency-Key` header, a retry of the same request is answered with the first answer "
        "(no message saved twice, no second extraction queued); the key with another body is a 409. "
        "Against the key's rate limit it counts once per 25 messages or per 100 KB of body, whichever is more."
    ),
    responses={201: {"description": "Messages saved"}},
)
def save_conversation(body: ConversationIn) -> Response[ConversationOut]:
    svc, who = services(), principal_of(router)

    def save() -> dict:
        return {"status": 201, "body": conversations.save_conversation(svc, who, body).model_dump(mode="json")}

    key = router.current_event.headers.get("Idempotency-Key")
    # the path is part of what the key guards: one key is one request, on one route
    result = idempotency.run_once(svc.platform.idempotency, who.organization_id, key,
                                  {"conversations": body.model_dump(mode="json")}, save)
    out: Any = result["body"]
    return Response(status_code=result["status"], content_type="application/json", body=out)


ConversationIdPath = Annotated[str, Path(min_length=1, max_length=MAX_CONVERSATION_ID_CHARS)]
ConversationIdQuery = Annotated[str, Query(min_length=1, max_length=MAX_CONVERSATION_ID_CHARS)]
PageLimit = Annotated[int, Query(ge=1, le=conversations.MAX_PAGE)]
Cursor = Annotated[str | None, Query(max_length=400)]


def _messages(conversation_id: str, project_id: str | None, limit: int, cursor: str | None) -> ConversationMessagesOut:
    wanted = conversation_id.strip()
    if not wanted:
        raise InvalidInputError("conversation_id", "must not be blank")
    return conversations.list_conversation(services(), principal_of(router), wanted, project_id, limit, cursor)


@router.get("/v3/conversations/<conversation_id>", tags=["conversations"],
            summary="A conversation's messages in order, a page at a time",
            description="The conversation's visible memories (saved by POST /v3/conversations, or by POST /v3/memory "
                        "with this conversation_id) in conversation order. 404 when the project has none. An id "
                        "with a `/` in it cannot be a path segment: GET /v3/conversations?conversation_id= takes any.")
def get_conversation(
    conversation_id: ConversationIdPath,
    project_id: Annotated[UUIDStr | None, Query()] = None,
    limit: PageLimit = 50,
    cursor: Cursor = None,
) -> ConversationMessagesOut:
    return _messages(conversation_id, project_id, limit, cursor)


@router.get("/v3/conversations", tags=["conversations"],
            summary="A conversation's messages in order, the id as a query parameter (any id, `/` included)")
def get_conversation_by_query(
    conversation_id: ConversationIdQuery,
    project_id: Annotated[UUIDStr | None, Query()] = None,
    limit: PageLimit = 50,
    cursor: Cursor = None,
) -> ConversationMessagesOut:
    return _messages(conversation_id, project_id, limit, cursor)


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
