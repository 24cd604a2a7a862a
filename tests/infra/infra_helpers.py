"""Helpers for the infra tests: reading a synthesized template."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass
class Synth:
    """One synthesized variant: the template as JSON and as an assertions.Template."""

    name: str
    stack: Any
    app: Any
    outdir: Path
    template_path: Path
    template_json: dict[str, Any]

    @property
    def template(self):
        from aws_cdk.assertions import Template

        if not hasattr(self, "_template"):
            self._template = Template.from_json(self.template_json)
        return self._template

    @property
    def resources(self) -> dict[str, dict[str, Any]]:
        return self.template_json["Resources"]

    def of_type(self, resource_type: str) -> dict[str, dict[str, Any]]:
        return {k: r for k, r in self.resources.items() if r["Type"] == resource_type}

    def props(self, logical_id: str) -> dict[str, Any]:
        return self.resources[logical_id].get("Properties", {})


def join_to_text(value: Any) -> str:
    """Flatten an Fn::Join of strings and intrinsics into text; intrinsics become <...>."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and "Fn::Join" in value:
        delimiter, parts = value["Fn::Join"]
        return delimiter.join(join_to_text(p) for p in parts)
    if isinstance(value, dict) and "Ref" in value:
        return f"<{value['Ref']}>"
    if isinstance(value, dict) and "Fn::GetAtt" in value:
        return f"<{'.'.join(value['Fn::GetAtt'])}>"
    return f"<{json.dumps(value, sort_keys=True)}>"


def state_machine_definition(synth: Synth) -> dict[str, Any]:
    (machine,) = synth.of_type("AWS::StepFunctions::StateMachine").values()
    text = join_to_text(machine["Properties"]["DefinitionString"])
    # Intrinsics only appear as whole JSON string values ("Resource": "<...>").
    return json.loads(re.sub(r"<[^<>]*>", "ARN", text))


def statements(policy_resource: dict[str, Any]) -> list[dict[str, Any]]:
    document = policy_resource["Properties"]["PolicyDocument"]
    return document["Statement"]


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def role_policies(synth: Synth, role_logical_id: str) -> list[dict[str, Any]]:
    """All Allow statements of the AWS::IAM::Policy resources attached to a role."""
    found = []
    for policy in synth.of_type("AWS::IAM::Policy").values():
        roles = [r.get("Ref") for r in policy["Properties"].get("Roles", [])]
        if role_logical_id in roles:
            found.extend(s for s in statements(policy) if s["Effect"] == "Allow")
    return found


def memlane_functions(synth: Synth) -> dict[str, dict[str, Any]]:
    """memlane's Lambda functions (excludes CDK's own S3 auto-delete provider)."""
    return {
        k: r
        for k, r in synth.of_type("AWS::Lambda::Function").items()
        if str(r["Properties"].get("Handler", "")).startswith("functions.")
    }


def function_by_handler(synth: Synth, handler: str) -> tuple[str, dict[str, Any]]:
    for logical_id, resource in memlane_functions(synth).items():
        if resource["Properties"]["Handler"] == handler:
            return logical_id, resource
    raise AssertionError(f"no function with handler {handler}")


def function_role(function: dict[str, Any]) -> str:
    return function["Properties"]["Role"]["Fn::GetAtt"][0]
