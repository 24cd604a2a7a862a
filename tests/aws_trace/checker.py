"""Calls against grants, after a trace: every need a call had that its principal's policies did not
grant (also those only known after the call), and every grant of the principals' policies that no
traced call used, unless a reviewed allow-list entry says why it is there anyway."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from aws_trace.policy import Grant, Need, Statement, evaluate, grants_of, wildcard_match
from aws_trace.recorder import Principal, Trace


@dataclass(frozen=True)
class Denied:
    principal: str
    operation: str
    need: Need
    by_resource_policy: bool

    def describe(self) -> str:
        where = "the domain's access policy" if self.by_resource_policy else "its role"
        return f"{self.principal}: {self.operation} needs {self.need.describe()}, which {where} does not grant"


@dataclass(frozen=True)
class Unused:
    principal: str
    grant: Grant
    policy: str  # "role" or a resource policy's name

    def describe(self) -> str:
        return f"{self.principal} ({self.policy}): {self.grant.describe()}"


@dataclass(frozen=True)
class Justified:
    """Grants no traced call uses, kept for a reason (principal, action and resource are regexes,
    matched whole; the action case-insensitively, as IAM does)."""

    principal: str
    action: str
    resource: str
    reason: str
    policy: str = "role"

    def covers(self, unused: Unused) -> bool:
        return (self.policy == unused.policy and re.fullmatch(self.principal, unused.principal) is not None
                and re.fullmatch(self.action, unused.grant.action, flags=re.IGNORECASE) is not None
                and all(re.fullmatch(self.resource, r) is not None for r in unused.grant.resources))


def denied(trace: Trace) -> list[Denied]:
    return [Denied(call.principal, call.operation, checked.need,
                   by_resource_policy=checked.decision.allowed and not checked.allowed)
            for call in trace.calls for checked in call.denied]


def _used(statements: Sequence[Statement], needs: Iterable[Need]) -> set[Grant]:
    """Every grant that allows one of the needs (all of them, not only the first: two statements
    granting the same need are both in use)."""
    used: set[Grant] = set()
    allows = [s for s in statements if s.effect == "Allow"]
    for need in needs:
        for statement in allows:
            action = statement.matching_action(need.action)
            resource = statement.matching_resource(need.resource) if action else None
            if action and resource and statement.conditions_hold(need.context):
                used.update(g for g in grants_of([statement]) if wildcard_match(g.action, need.action, ignore_case=True))
    return used


def unused(trace: Trace, principals: Iterable[Principal]) -> list[Unused]:
    """Grants of each principal (its role, and the resource policies that name it) that none of
    its traced calls used."""
    out: list[Unused] = []
    for principal in principals:
        needs = [c.need for call in trace.calls if call.principal == principal.name
                 for c in call.checked if c.decision.allowed]
        used = _used(principal.statements, needs)
        out += [Unused(principal.name, g, "role") for g in grants_of(principal.statements) if g not in used]
        for name, statements in principal.resource_policies.items():
            used_here = _used(statements, needs)
            out += [Unused(principal.name, g, name) for g in grants_of(statements) if g not in used_here]
    return out


def unjustified(found: Iterable[Unused], justified: Iterable[Justified]) -> list[Unused]:
    allowed = list(justified)
    return [u for u in found if not any(j.covers(u) for j in allowed)]


def stale(found: Iterable[Unused], justified: Iterable[Justified]) -> list[Justified]:
    """Allow-list entries that no unused grant needs any more: a reason for nothing is removed."""
    found = list(found)
    return [j for j in justified if not any(j.covers(u) for u in found)]


__all__ = ["Denied", "Justified", "Unused", "denied", "evaluate", "stale", "unjustified", "unused"]
