"""Every AWS call made while a principal (a function's role, the state machine's role) is active,
recorded through botocore's event hooks and checked against that principal's policy statements.

botocore emits `before-parameter-build` (the call's own parameters), `before-call` (a handler that
returns a response there answers the call instead of the service) and `after-call` (the response,
or the error). The hooks are added to `botocore.handlers.BUILTIN_HANDLERS`, which every botocore
session registers when it is created (moto's own hook gets in the same way): every client the
code under test creates (boto3's default session, Powertools' sessions) is traced.

A call whose `before` needs are not all granted is answered `AccessDenied` (HTTP 403), as AWS
would answer it, so the code's handling of the refusal runs too; every denied need is recorded.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import boto3
import botocore.handlers
from botocore.awsrequest import AWSResponse
from botocore.exceptions import ClientError

from aws_trace.needs import CallInfo, Lookup, needs
from aws_trace.policy import Decision, Need, Statement, evaluate

_PARAMS = "aws_trace_params"
_CALL = "aws_trace_call"


def _response(status: int, parsed: dict[str, Any]) -> tuple[AWSResponse, dict[str, Any]]:
    metadata = {"HTTPStatusCode": status, "HTTPHeaders": {}, "RetryAttempts": 0}
    return AWSResponse("https://trace.invalid/", status, {}, None), {**parsed, "ResponseMetadata": metadata}


@dataclass
class Principal:
    """Who is calling: a function (its logical id) through its role's statements."""

    name: str
    role: str
    statements: list[Statement]
    # extra statements that admit this principal for OpenSearch (the domain's access policy)
    resource_policies: dict[str, list[Statement]] = field(default_factory=dict)


@dataclass
class Checked:
    need: Need
    decision: Decision
    resource_policy: Decision | None = None  # for OpenSearch: the domain's access policy's answer

    @property
    def allowed(self) -> bool:
        return self.decision.allowed and (self.resource_policy is None or self.resource_policy.allowed)


@dataclass
class Call:
    principal: str
    role: str
    kind: str  # "aws" (botocore), "opensearch", "invoke" (a state machine's Task)
    operation: str  # "dynamodb.GetItem", "PUT /memlane-chunks-v1", "lambda.Invoke"
    checked: list[Checked] = field(default_factory=list)

    @property
    def denied(self) -> list[Checked]:
        return [c for c in self.checked if not c.allowed]


class Trace:
    def __init__(self, lookup: Lookup) -> None:
        self.lookup = lookup
        self.calls: list[Call] = []
        self.principal: Principal | None = None
        # (service, operation) -> the parsed response: operations a fake answers instead of moto
        # (after the call was checked, exactly like one moto answers)
        self.answers: dict[tuple[str, str], Callable[[dict[str, Any]], dict[str, Any]]] = {}

    # ------------------------------------------------------------------ who is calling

    @contextmanager
    def acting_as(self, principal: Principal) -> Iterator[Principal]:
        previous, self.principal = self.principal, principal
        try:
            yield principal
        finally:
            self.principal = previous

    @contextmanager
    def answering(self, entries: dict[tuple[str, str], Callable[[dict[str, Any]], dict[str, Any]]]) -> Iterator[None]:
        """A fake answers these (service, operation) calls, once each is checked, until the block ends."""
        self.answers.update(entries)
        try:
            yield
        finally:
            for key in entries:
                self.answers.pop(key, None)

    @contextmanager
    def unrecorded(self) -> Iterator[None]:
        """The harness's own calls (setting up the world, answering a need's lookup)."""
        previous, self.principal = self.principal, None
        try:
            yield
        finally:
            self.principal = previous

    def check(self, call: Call, need: Need, resource_policy: str | None = None) -> Checked:
        principal = self.principal
        assert principal is not None
        checked = Checked(need, evaluate(principal.statements, need))
        if resource_policy is not None:
            checked.resource_policy = evaluate(principal.resource_policies.get(resource_policy, []), need)
        call.checked.append(checked)
        return checked

    def record(self, kind: str, operation: str) -> Call:
        assert self.principal is not None
        call = Call(self.principal.name, self.principal.role, kind, operation)
        self.calls.append(call)
        return call

    # ------------------------------------------------------------------ botocore's hooks

    def before_parameter_build(self, params: dict[str, Any], context: dict[str, Any], **_: Any) -> None:
        context[_PARAMS] = copy.deepcopy(params)

    def before_call(self, model: Any, context: dict[str, Any], **_: Any) -> Any:
        if self.principal is not None and _PARAMS in context:
            info = self._info(model, context)
            call = self.record("aws", f"{info.service}.{info.operation}")
            with self.unrecorded():
                wanted = needs(info)
            denied = [n for n in wanted if not self.check(call, n).allowed]
            context[_CALL] = (call, info)
            if denied:
                code = "AccessDenied" if info.service == "s3" else "AccessDeniedException"
                message = f"{self.principal.name} is not authorized to perform: {denied[0].describe()}"
                return _response(403, {"Error": {"Code": code, "Message": message}})
        answer = self.answers.get((model.service_model.service_name, model.name))
        if answer is not None:
            try:
                return _response(200, answer(context.get(_PARAMS, {})))
            except ClientError as exc:  # a fake refused the call as the service would: its error, its status
                status = int(exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 400) or 400)
                return _response(status, {"Error": exc.response["Error"]})
        return None

    def after_call(self, parsed: dict[str, Any], context: dict[str, Any], **_: Any) -> None:
        if _CALL not in context or self.principal is None:
            return
        call, info = context.pop(_CALL)
        if call.denied:
            return
        status = int(parsed.get("ResponseMetadata", {}).get("HTTPStatusCode", 200) or 200)
        info.error_code = str(parsed.get("Error", {}).get("Code")) if status >= 300 else None
        info.response = parsed if status < 300 else {}
        with self.unrecorded():
            wanted = needs(info)
        for need in wanted:
            self.check(call, need)

    def _info(self, model: Any, context: dict[str, Any]) -> CallInfo:
        return CallInfo(service=model.service_model.service_name, operation=model.name, params=context[_PARAMS],
                        region=str(context.get("client_region") or ""), lookup=self.lookup)

    @contextmanager
    def hooked(self) -> Iterator[Trace]:
        """The hooks in every botocore session created inside the block (boto3's default session
        is dropped, so the next client comes from a new one)."""
        entries: list[tuple[str, Callable[..., Any]]] = [
            ("before-parameter-build", self.before_parameter_build), ("before-call", self.before_call),
            ("after-call", self.after_call)]
        botocore.handlers.BUILTIN_HANDLERS.extend(entries)
        saved_default = boto3.DEFAULT_SESSION
        boto3.DEFAULT_SESSION = None
        try:
            yield self
        finally:
            for entry in entries:
                botocore.handlers.BUILTIN_HANDLERS.remove(entry)
            boto3.DEFAULT_SESSION = saved_default
