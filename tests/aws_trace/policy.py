"""IAM policy evaluation, as much of it as memlane's policies use: Allow and Deny statements with
Action and Resource (strings or lists, `*` and `?` wildcards) and Condition blocks.

What IAM does and this does too: actions match case-insensitively, resources case-sensitively; an
explicit Deny wins over any Allow; a condition key is matched case-insensitively; a single-valued
operator on a key the request does not carry fails (unless `...IfExists`), `ForAllValues:` passes
on a missing key, `ForAnyValue:` fails on it. What memlane's policies never use (NotAction,
NotResource, NotPrincipal, policy variables, an operator not listed in OPERATORS) raises
`UnsupportedPolicy` rather than being guessed at, so a grant can never pass this check by accident.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

ContextValue = str | Sequence[str]


class UnsupportedPolicy(ValueError):
    """A policy element this evaluator does not implement: never treated as allowing anything."""


def as_list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list | tuple) else [value]


def wildcard_match(pattern: str, value: str, *, ignore_case: bool = False) -> bool:
    """IAM's `*` (any run of characters, `/` and `:` included) and `?` (one character)."""
    if "${" in pattern:
        raise UnsupportedPolicy(f"policy variables are not evaluated: {pattern}")
    regex = "".join(".*" if ch == "*" else "." if ch == "?" else re.escape(ch) for ch in pattern)
    return re.fullmatch(regex, value, flags=re.IGNORECASE | re.DOTALL if ignore_case else re.DOTALL) is not None


def _string_equals(pattern: str, value: str) -> bool:
    return pattern == value


def _string_equals_ignore_case(pattern: str, value: str) -> bool:
    return pattern.lower() == value.lower()


def _string_like(pattern: str, value: str) -> bool:
    return wildcard_match(pattern, value)


def _bool(pattern: str, value: str) -> bool:
    return str(pattern).lower() == str(value).lower()


# The positive operators; `Not` forms negate them (IAM: true when no value matches).
OPERATORS: dict[str, Callable[[str, str], bool]] = {
    "StringEquals": _string_equals,
    "StringEqualsIgnoreCase": _string_equals_ignore_case,
    "StringLike": _string_like,
    "ArnEquals": _string_equals,
    "ArnLike": _string_like,
    "Bool": _bool,
}
NEGATED = {"StringNotEquals": "StringEquals", "StringNotLike": "StringLike", "ArnNotEquals": "ArnEquals",
           "ArnNotLike": "ArnLike", "StringNotEqualsIgnoreCase": "StringEqualsIgnoreCase"}


@dataclass(frozen=True)
class Need:
    """One authorization a call needs: an action on a resource, with the request's condition context."""

    action: str
    resource: str
    context: Mapping[str, ContextValue] = field(default_factory=dict)
    why: str = ""  # what in the call asks for it (shown when it is denied)

    def describe(self) -> str:
        extra = f" {dict(self.context)}" if self.context else ""
        return f"{self.action} on {self.resource}{extra}" + (f" ({self.why})" if self.why else "")


@dataclass(frozen=True)
class Statement:
    effect: str
    actions: tuple[str, ...]
    resources: tuple[str, ...]
    conditions: Mapping[str, Mapping[str, Any]]
    source: str  # where it came from (policy logical id and index), for reports

    @classmethod
    def parse(cls, raw: Mapping[str, Any], source: str) -> Statement:
        for unsupported in ("NotAction", "NotResource", "NotPrincipal"):
            if unsupported in raw:
                raise UnsupportedPolicy(f"{source}: {unsupported} is not evaluated")
        return cls(
            effect=str(raw["Effect"]),
            actions=tuple(str(a) for a in as_list(raw.get("Action", []))),
            resources=tuple(str(r) for r in as_list(raw.get("Resource", []))),
            conditions={op: dict(block) for op, block in dict(raw.get("Condition") or {}).items()},
            source=source,
        )

    def matching_action(self, action: str) -> str | None:
        return next((a for a in self.actions if wildcard_match(a, action, ignore_case=True)), None)

    def matching_resource(self, resource: str) -> str | None:
        return next((r for r in self.resources if wildcard_match(r, resource)), None)

    def conditions_hold(self, context: Mapping[str, ContextValue]) -> bool:
        lowered = {k.lower(): v for k, v in context.items()}
        return all(_condition(op, key, expected, lowered)
                   for op, block in self.conditions.items() for key, expected in block.items())


def _condition(operator: str, key: str, expected: Any, context: Mapping[str, ContextValue]) -> bool:
    qualifier, _, op = operator.rpartition(":")
    if_exists = op.endswith("IfExists")
    op = op.removesuffix("IfExists")
    present = key.lower() in context
    if op == "Null":
        wants_missing = str(expected).lower() == "true"
        return wants_missing != present
    values = [str(v) for v in as_list(context.get(key.lower(), []))]
    negate = op in NEGATED
    test = OPERATORS.get(NEGATED.get(op, op))
    if test is None or qualifier not in ("", "ForAllValues", "ForAnyValue"):
        raise UnsupportedPolicy(f"condition operator {operator} is not evaluated")
    patterns = [str(p) for p in as_list(expected)]

    def matches(value: str) -> bool:
        hit = any(test(p, value) for p in patterns)
        return not hit if negate else hit

    if not present:
        return if_exists or qualifier == "ForAllValues" or (negate and not qualifier)
    if qualifier == "ForAllValues":
        return all(matches(v) for v in values)
    if qualifier == "ForAnyValue":
        return any(matches(v) for v in values)
    if len(values) != 1:
        raise UnsupportedPolicy(f"{operator} on the multi-valued key {key} needs ForAllValues or ForAnyValue")
    return matches(values[0])


@dataclass(frozen=True)
class Grant:
    """One action of one statement, on that statement's resources: the unit a trace uses or not
    (used when a traced call needed that action on one of those resources)."""

    source: str
    action: str
    resources: tuple[str, ...]

    @property
    def resource(self) -> str:
        return " ".join(self.resources)

    def describe(self) -> str:
        return f"{self.action} on {self.resource} [{self.source}]"


@dataclass(frozen=True)
class Decision:
    allowed: bool
    by: Grant | None = None  # the grant that allowed it
    denied_by: str | None = None  # an explicit Deny statement's source


def evaluate(statements: Iterable[Statement], need: Need) -> Decision:
    """IAM's answer for one need against one principal's statements (identity policies, or the
    statements of a resource policy that name the principal)."""
    allowed: Grant | None = None
    for statement in statements:
        action = statement.matching_action(need.action)
        resource = statement.matching_resource(need.resource) if action else None
        if action is None or resource is None or not statement.conditions_hold(need.context):
            continue
        if statement.effect == "Deny":
            return Decision(False, denied_by=statement.source)
        allowed = allowed or Grant(statement.source, action, (resource,))
    return Decision(allowed is not None, by=allowed)


def grants_of(statements: Iterable[Statement]) -> list[Grant]:
    """Every action an Allow statement grants (on its resources): each must be used by a traced
    call or be justified (checker.py)."""
    return [Grant(s.source, a, s.resources) for s in statements if s.effect == "Allow" for a in s.actions]
