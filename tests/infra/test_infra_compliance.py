"""Compliance: cdk-nag's AwsSolutions pack passes with every acknowledgment reasoned and expected,
the pack really blocks synthesis on a new finding, and cfn-lint finds no errors."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.infra

# Every acknowledged cdk-nag finding must match one of these (a new acknowledgment is a reviewed
# change to this list). Reasons live next to the acknowledgment in infra/.
EXPECTED_ACKNOWLEDGMENTS = [
    # X-Ray and Step Functions log delivery (no resource-level permissions)
    r"AwsSolutions-IAM5\[Resource::\*\]",
    r"AwsSolutions-IAM5\[Resource::<StorageContentBucket\w+\.Arn>/\*\]",  # S3 object keys
    # Amazon Transcribe reads recordings (media/*) and writes transcripts (work/*) as the workflow
    r"AwsSolutions-IAM5\[Resource::<StorageContentBucket\w+\.Arn>/(media|work)/\*\]",
    r"AwsSolutions-IAM5\[Resource::arn:<AWS::Partition>:transcribe:<AWS::Region>:<AWS::AccountId>:"
    r"transcription-job/memlane-\*\]",
    # the search index's own paths: the alias's subpaths and its versioned indices (<alias>-v<n>)
    r"AwsSolutions-IAM5\[Resource::arn:<AWS::Partition>:es:<AWS::Region>:<AWS::AccountId>:domain/memlane-\w+/"
    r"memlane-chunks(/\*|-v\*)\]",
    # S3 Vectors: the indexes memlane creates per organization at run time, inside the stack's vector bucket
    r"AwsSolutions-IAM5\[Resource::<SearchBucket\w+\.VectorBucketArn>/index/\*\]",
    r"AwsSolutions-IAM5\[Resource::<\w+Function\w+\.Arn>:\*\]",  # qualified invocations of one function
    # API keys (and their tags on create), conditioned on the stage tag memlane sets
    r"AwsSolutions-IAM5\[Resource::arn:<AWS::Partition>:apigateway:<AWS::Region>::/(apikeys|tags)/\*\]",
    r"AwsSolutions-IAM4\[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs\]",
    r"AwsSolutions-L1",  # Python 3.12 pinned with the layer's ABI
    r"AwsSolutions-OS1",  # public endpoint + IAM
    r"AwsSolutions-OS3",  # IAM principals instead of IP allow-lists
    r"AwsSolutions-OS4",  # no dedicated masters on a small domain
    r"AwsSolutions-OS7",  # single node (only when search_instance_count == 1)
    r"AwsSolutions-APIG2",  # validation by the resolver's pydantic models
    r"AwsSolutions-APIG3",  # no WAF by default
    r"AwsSolutions-APIG4",  # public health/spec routes and CORS preflights
    r"AwsSolutions-COG4",  # memlane API keys and bound Cognito tokens, in one Lambda authorizer
    r"AwsSolutions-COG8",  # Essentials, not Plus (oauth=true only)
    r"AwsSolutions-SQS3",  # the schedule DLQs are DLQs themselves
    # the web app's distribution: no geo restriction, no WAF, no standard logs, default certificate
    r"AwsSolutions-CFR[1-4]",
    # CDK's BucketDeployment handler (copies the built app into its bucket, invalidates the distribution)
    r"AwsSolutions-IAM4\[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole\]",
    r"AwsSolutions-IAM5\[Action::s3:(GetBucket|GetObject|List|Abort|DeleteObject)\*\]",
    r"AwsSolutions-IAM5\[Resource::arn:<AWS::Partition>:s3:::cdk-hnb659fds-assets-<AWS::AccountId>-<AWS::Region>/\*\]",
    r"AwsSolutions-IAM5\[Resource::<WebAppAppBucket\w+\.Arn>/\*\]",
]
MIN_REASON_LENGTH = 40


def _acknowledgments(synth) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for resource in synth.resources.values():
        for rule in resource.get("Metadata", {}).get("cdk_nag", {}).get("rules_to_suppress", []):
            found.setdefault(rule["id"], set()).add(rule["reason"])
    return found


def test_cdk_nag_aws_solutions_finds_nothing_unacknowledged(every_variant):
    from cdk_nag import AwsSolutionsChecks

    # The synthesis in the fixture already ran the pack as a validation plugin (it raises on any
    # finding); running it again directly gives a readable list if this ever fails.
    report = AwsSolutionsChecks(verbose=True).validate_scope(every_variant.stack)
    violations = [
        (v.rule_name, [r.construct_path for r in v.violating_resources]) for v in report.violations or []
    ]
    assert violations == []
    assert report.success is True
    validation_report = every_variant.outdir / "validation-report.json"
    if validation_report.exists():
        for plugin in json.loads(validation_report.read_text())["pluginReports"]:
            assert not [v for v in plugin["violations"] if v["ruleName"].startswith("AwsSolutions")]


def test_no_error_annotations_on_the_stack(dev):
    from aws_cdk.assertions import Annotations, Match

    # cdk-nag 3 reports through the validation plugin above, not through annotations; this checks
    # that nothing else (CDK itself, an older cdk-nag) flagged an error either.
    annotations = Annotations.from_stack(dev.stack)
    assert annotations.find_error("*", Match.string_like_regexp("AwsSolutions-.*")) == []
    assert annotations.find_error("*", Match.any_value()) == []


def test_every_acknowledgment_is_expected_and_has_a_real_reason(every_variant):
    acknowledged = _acknowledgments(every_variant)
    assert acknowledged, "acknowledgments are written to the template metadata"
    for rule_id, reasons in acknowledged.items():
        assert any(re.fullmatch(pattern, rule_id) for pattern in EXPECTED_ACKNOWLEDGMENTS), rule_id
        for reason in reasons:
            assert len(reason) >= MIN_REASON_LENGTH, (rule_id, reason)


def test_zone_awareness_is_only_waived_for_a_single_node(dev, prod):
    assert "AwsSolutions-OS7" in _acknowledgments(dev)
    assert "AwsSolutions-OS7" not in _acknowledgments(prod)


def test_the_nag_plugin_stops_synthesis_on_an_unacknowledged_finding(tmp_path, fake_layer, fake_webapp):
    from aws_cdk import aws_s3 as s3

    from infra.app import build_app

    # Given the app with one extra bucket that has neither access logs nor a TLS-only policy
    app, stack = build_app(
        {"layer_asset": str(fake_layer), "webapp_asset": str(fake_webapp)}, outdir=str(tmp_path / "cdk.out"),
        code_staging_dir=tmp_path / "src",
    )
    s3.Bucket(stack, "UnreviewedBucket")
    # When it is synthesized, Then cdk-nag's findings stop it
    with pytest.raises(RuntimeError, match="ValidationFailed"):
        app.synth()
    report = json.loads((tmp_path / "cdk.out" / "validation-report.json").read_text())
    rules = {v["ruleName"] for plugin in report["pluginReports"] for v in plugin["violations"]}
    assert {"AwsSolutions-S1", "AwsSolutions-S10"} <= rules


def test_cfn_lint_finds_no_errors(every_variant):
    from cfnlint.api import ManualArgs, lint_file

    matches = lint_file(Path(every_variant.template_path), config=ManualArgs(regions=["us-east-1"]))
    errors = [f"{m.rule.id} {m.message}" for m in matches if m.rule.id.startswith("E")]
    assert errors == []
    # W3005 (a DependsOn that a GetAtt already implies) is how CDK orders a function after its
    # role's policy; nothing else may warn.
    assert {m.rule.id for m in matches} <= {"W3005"}


COMMON_RESOURCE_TYPES = {
    "AWS::ApiGateway::Authorizer",
    "AWS::ApiGateway::Deployment",
    "AWS::ApiGateway::GatewayResponse",
    "AWS::ApiGateway::Method",
    "AWS::ApiGateway::Resource",
    "AWS::ApiGateway::RestApi",
    "AWS::ApiGateway::Stage",
    "AWS::ApiGateway::UsagePlan",
    "AWS::CloudWatch::Alarm",
    "AWS::CloudWatch::Dashboard",
    "AWS::DynamoDB::Table",
    "AWS::IAM::Policy",
    "AWS::IAM::Role",
    "AWS::KMS::Key",
    "AWS::Lambda::EventInvokeConfig",
    "AWS::Lambda::EventSourceMapping",
    "AWS::Lambda::Function",
    "AWS::Lambda::LayerVersion",
    "AWS::Lambda::Permission",
    "AWS::Logs::LogGroup",
    "AWS::S3::Bucket",
    "AWS::S3::BucketPolicy",
    "AWS::SNS::Topic",
    "AWS::SNS::TopicPolicy",
    "AWS::SQS::Queue",
    "AWS::SQS::QueuePolicy",
    "AWS::Scheduler::Schedule",
    "AWS::StepFunctions::StateMachine",
    # the web app: CloudFront in front of its bucket and the API, and CDK's deployment of the build
    "AWS::CloudFront::Distribution",
    "AWS::CloudFront::OriginAccessControl",
    "AWS::CloudFront::ResponseHeadersPolicy",
    "AWS::CloudFront::Function",
    "Custom::CDKBucketDeployment",
}
MANAGED_SEARCH_TYPES = {"AWS::OpenSearchService::Domain", "AWS::Logs::ResourcePolicy"}
SERVERLESS_SEARCH_TYPES = {
    "AWS::OpenSearchServerless::Collection",
    "AWS::OpenSearchServerless::SecurityPolicy",
    "AWS::OpenSearchServerless::AccessPolicy",
}
S3VECTORS_SEARCH_TYPES = {"AWS::S3Vectors::VectorBucket", "Custom::MemlaneVectorBucket"}
# oauth=true: the Cognito user pool that issues tokens for /mcp
OAUTH_TYPES = {
    "AWS::Cognito::UserPool",
    "AWS::Cognito::UserPoolClient",
    "AWS::Cognito::UserPoolResourceServer",
    "AWS::Cognito::UserPoolDomain",
    "AWS::Cognito::ManagedLoginBranding",
    "AWS::Cognito::UserPoolGroup",
}
DEV_ONLY_TYPES = {"Custom::S3AutoDeleteObjects"}  # empties the dev buckets on destroy


@pytest.mark.parametrize(
    ("variant", "expected"),
    [
        ("dev", COMMON_RESOURCE_TYPES | MANAGED_SEARCH_TYPES | DEV_ONLY_TYPES | {"AWS::ApiGateway::Account"}),
        (
            "serverless",
            COMMON_RESOURCE_TYPES | SERVERLESS_SEARCH_TYPES | DEV_ONLY_TYPES | {"AWS::ApiGateway::Account"},
        ),
        ("prod", COMMON_RESOURCE_TYPES | MANAGED_SEARCH_TYPES | OAUTH_TYPES | {"AWS::SNS::Subscription"}),
        # no OpenSearch; lean observability has no dashboard
        ("s3vectors", (COMMON_RESOURCE_TYPES - {"AWS::CloudWatch::Dashboard"}) | S3VECTORS_SEARCH_TYPES
         | DEV_ONLY_TYPES | {"AWS::ApiGateway::Account"}),
    ],
)
def test_the_stack_is_made_of_exactly_these_resource_types(synth_variant, variant, expected):
    # A new kind of resource (say, a log-retention custom resource) is a reviewed change here.
    assert {r["Type"] for r in synth_variant(variant).resources.values()} == expected
