"""cdk-nag wiring: the AwsSolutions pack as a synth-time validation plugin, and acknowledgments.

cdk-nag 3 runs through CDK's policy validation (``Validations.of(app).add_plugins``): any
unacknowledged finding, error or warning, stops synthesis. An acknowledgment names one rule, or one
finding of a granular rule (``AwsSolutions-IAM5[Resource::<Bucket.Arn>/*]``), on one construct and
everything below it. Every acknowledgment here carries a reason; they are also written into the
template metadata (``cdk_nag.rules_to_suppress``) so an audit can read them from the template.
"""

from __future__ import annotations

import json
from typing import Any

from aws_cdk import Acknowledgment, Stack, Validations
from aws_cdk import aws_iam as iam
from cdk_nag import AwsSolutionsChecks
from constructs import Construct, IConstruct

MIN_REASON_LENGTH = 40


def enable_aws_solutions_checks(scope: IConstruct) -> None:
    Validations.of(scope).add_plugins(
        AwsSolutionsChecks(scope, verbose=True, write_suppressions_to_cloud_formation=True)
    )


def acknowledge(construct: IConstruct | iam.IGrantable | iam.IPrincipal, rule_id: str, reason: str) -> None:
    """Acknowledge one cdk-nag rule (or finding) on `construct` and its children. A grantee or a
    principal (a function, a role) is acknowledged on itself: it must be a construct."""
    if len(reason.strip()) < MIN_REASON_LENGTH:
        raise ValueError(f"acknowledging {rule_id} needs a reason a reviewer can check, got {reason!r}")
    if not isinstance(construct, Construct):
        raise TypeError(f"cannot acknowledge {rule_id} on {construct!r}: not a construct")
    Validations.of(construct).acknowledge(Acknowledgment(id=rule_id, reason=reason))


def wildcard_resource_finding(scope: IConstruct, resource: str) -> str:
    """The AwsSolutions-IAM5 finding id cdk-nag reports for an IAM resource string (tokens allowed)."""
    return f"AwsSolutions-IAM5[Resource::{flatten_cfn_reference(Stack.of(scope).resolve(resource))}]"


def wildcard_action_finding(action: str) -> str:
    return f"AwsSolutions-IAM5[Action::{action}]"


def flatten_cfn_reference(node: Any) -> str:
    """Port of cdk-nag's flattenCfnReference: intrinsic functions become `<Logical.Attr>` text."""
    if node is None:
        return ""
    if isinstance(node, str):
        return node.replace("${", "<").replace("}", ">")
    if isinstance(node, dict):
        if "Fn::Join" in node:
            delimiter, items = node["Fn::Join"]
            return delimiter.join(flatten_cfn_reference(item) for item in items)
        if "Fn::Sub" in node:
            return flatten_cfn_reference(node["Fn::Sub"])
        if "Fn::GetAtt" in node:
            resource, attribute = node["Fn::GetAtt"]
            return f"<{flatten_cfn_reference(resource)}.{flatten_cfn_reference(attribute)}>"
        if "Fn::ImportValue" in node:
            return flatten_cfn_reference(node["Fn::ImportValue"])
        if "Ref" in node:
            return f"<{flatten_cfn_reference(node['Ref'])}>"
    return json.dumps(node, separators=(",", ":"))
