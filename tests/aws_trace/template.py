"""A synthesized CloudFormation template resolved against one world's physical resources: the
intrinsics CDK emits (Ref, Fn::GetAtt, Fn::Join, Fn::Sub, Fn::Select, Fn::Split, Fn::FindInMap)
evaluated with the names and ARNs world.py gave each resource, so a role's policy statements, a
function's environment and the state machine's definition read as they would once deployed."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from aws_trace.policy import Statement, UnsupportedPolicy, as_list

ACCOUNT = "123456789012"  # moto's default account
REGION = "us-east-1"
PARTITION = "aws"
URL_SUFFIX = "amazonaws.com"


class UnresolvedReference(KeyError):
    """A reference to a resource or attribute the world does not know: never silently a string."""


@dataclass
class Template:
    raw: dict[str, Any]
    stack_name: str
    region: str = REGION

    @property
    def resources(self) -> dict[str, dict[str, Any]]:
        return dict(self.raw["Resources"])

    def of_type(self, resource_type: str) -> dict[str, dict[str, Any]]:
        return {k: r for k, r in self.resources.items() if r["Type"] == resource_type}

    def props(self, logical_id: str) -> dict[str, Any]:
        return dict(self.resources[logical_id].get("Properties", {}))

    def memlane_functions(self) -> dict[str, dict[str, Any]]:
        """memlane's Lambda functions (not CDK's own providers), by logical id."""
        return {k: r for k, r in self.of_type("AWS::Lambda::Function").items()
                if str(r["Properties"].get("Handler", "")).startswith("functions.")}

    def function_by_handler(self, handler: str) -> str:
        found = [k for k, r in self.memlane_functions().items() if r["Properties"]["Handler"] == handler]
        if len(found) != 1:
            raise KeyError(f"{len(found)} functions with handler {handler}")
        return found[0]

    def role_of(self, function_id: str) -> str:
        return str(self.props(function_id)["Role"]["Fn::GetAtt"][0])


class Resolver:
    """Evaluates intrinsics. `physical[logical_id]` holds {"Ref": ..., "<Attribute>": ...}."""

    def __init__(self, template: Template, physical: Mapping[str, Mapping[str, str]]) -> None:
        self.template = template
        self.physical = physical
        self.pseudo = {"AWS::AccountId": ACCOUNT, "AWS::Region": template.region, "AWS::Partition": PARTITION,
                       "AWS::URLSuffix": URL_SUFFIX, "AWS::StackName": template.stack_name,
                       "AWS::NoValue": None}

    def ref(self, name: str) -> Any:
        if name in self.pseudo:
            return self.pseudo[name]
        return self.attribute(name, "Ref")

    def attribute(self, logical_id: str, name: str) -> str:
        try:
            return str(self.physical[logical_id][name])
        except KeyError as exc:
            raise UnresolvedReference(f"{logical_id}.{name}: the world has no such resource or attribute") from exc

    def __call__(self, value: Any) -> Any:
        if isinstance(value, list):
            return [self(v) for v in value]
        if not isinstance(value, dict):
            return value
        if len(value) == 1:
            (key, arg), = value.items()
            intrinsic = _INTRINSICS.get(key)
            if intrinsic is not None:
                return intrinsic(self, arg)
            if key.startswith("Fn::") or key == "Condition":
                raise UnresolvedReference(f"{key} is not evaluated by the trace")
        return {k: self(v) for k, v in value.items()}

    # -------------------------------------------------------------- what the checks read

    def role_statements(self, role_id: str) -> list[Statement]:
        """Every statement of the identity policies attached to a role (its inline Policies and the
        AWS::IAM::Policy resources naming it). Managed policies are refused: memlane uses none."""
        role = self.template.props(role_id)
        if role.get("ManagedPolicyArns"):
            raise UnsupportedPolicy(f"{role_id} has managed policies, which the trace cannot read")
        found: list[Statement] = []
        for index, policy in enumerate(role.get("Policies", [])):
            found += _statements(self(policy["PolicyDocument"]), f"{role_id}.Policies[{index}]")
        for policy_id, policy in self.template.of_type("AWS::IAM::Policy").items():
            roles = [r.get("Ref") for r in policy["Properties"].get("Roles", [])]
            if role_id in roles:
                found += _statements(self(policy["Properties"]["PolicyDocument"]), policy_id)
        return found

    def environment(self, function_id: str) -> dict[str, str]:
        variables = self.template.props(function_id).get("Environment", {}).get("Variables", {})
        return {name: str(self(value)) for name, value in variables.items()}

    def resource_policy_for(self, document: Any, principal_arn: str, source: str) -> list[Statement]:
        """The statements of a resource policy (an OpenSearch domain's access policy) that name
        `principal_arn` (or every principal)."""
        resolved = self(document)
        if isinstance(resolved, str):
            resolved = json.loads(resolved)
        out = []
        for index, raw in enumerate(resolved.get("Statement", [])):
            principal = raw.get("Principal", {})
            names = ["*"] if principal == "*" else [str(p) for p in as_list(principal.get("AWS", []))]
            if "*" in names or principal_arn in names:
                out.append(Statement.parse(raw, f"{source}.Statement[{index}]"))
        return out


def _statements(document: Mapping[str, Any], source: str) -> list[Statement]:
    return [Statement.parse(raw, f"{source}[{i}]") for i, raw in enumerate(as_list(document.get("Statement", [])))]


def _join(resolve: Resolver, arg: Any) -> str:
    delimiter, parts = arg
    return str(delimiter).join(str(resolve(p)) for p in resolve(parts))


def _get_att(resolve: Resolver, arg: Any) -> str:
    logical_id, name = arg.split(".", 1) if isinstance(arg, str) else arg
    return resolve.attribute(logical_id, name)


_SUB = re.compile(r"\$\{([^}!][^}]*)\}")


def _sub(resolve: Resolver, arg: Any) -> str:
    text, variables = (arg, {}) if isinstance(arg, str) else (arg[0], resolve(arg[1]))

    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        if name in variables:
            return str(variables[name])
        if "." in name and name not in resolve.pseudo:
            logical_id, attribute = name.split(".", 1)
            return resolve.attribute(logical_id, attribute)
        return str(resolve.ref(name))

    return _SUB.sub(value, text)


def _select(resolve: Resolver, arg: Any) -> Any:
    index, items = arg
    return resolve(items)[int(resolve(index))]


def _split(resolve: Resolver, arg: Any) -> list[str]:
    delimiter, text = arg
    return str(resolve(text)).split(delimiter)


def _find_in_map(resolve: Resolver, arg: Any) -> Any:
    name, top, second = resolve(arg)
    return resolve.template.raw["Mappings"][name][top][second]


_INTRINSICS = {
    "Ref": lambda resolve, arg: resolve.ref(arg),
    "Fn::GetAtt": _get_att,
    "Fn::Join": _join,
    "Fn::Sub": _sub,
    "Fn::Select": _select,
    "Fn::Split": _split,
    "Fn::FindInMap": _find_in_map,
}
