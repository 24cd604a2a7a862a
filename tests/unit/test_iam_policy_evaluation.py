"""The permission trace's IAM evaluation (tests/aws_trace/policy.py): what it allows must be what
IAM allows, or the trace proves nothing. Each case is a rule of IAM's policy evaluation."""

from __future__ import annotations

import pytest
from aws_trace.policy import Need, Statement, UnsupportedPolicy, evaluate, grants_of, wildcard_match

BUCKET = "arn:aws:s3:::memlane-dev-content"


def allow(action, resource, condition=None, source="p[0]") -> Statement:
    raw = {"Effect": "Allow", "Action": action, "Resource": resource}
    if condition:
        raw["Condition"] = condition
    return Statement.parse(raw, source)


def test_actions_match_without_case_and_resources_with_it():
    statements = [allow("S3:GetObject", f"{BUCKET}/content/*")]
    assert evaluate(statements, Need("s3:getobject", f"{BUCKET}/content/org/doc.txt")).allowed
    assert not evaluate(statements, Need("s3:GetObject", f"{BUCKET}/Content/org/doc.txt")).allowed
    assert not evaluate(statements, Need("s3:PutObject", f"{BUCKET}/content/org/doc.txt")).allowed


def test_a_star_spans_slashes_and_a_question_mark_is_one_character():
    assert wildcard_match("arn:aws:es:us-east-1:1:domain/d/memlane-chunks-v*", "arn:aws:es:us-east-1:1:domain/d/"
                          "memlane-chunks-v1/_alias/memlane-chunks")
    assert wildcard_match("arn:aws:secretsmanager:r:1:secret:memlane/connections-??????",
                          "arn:aws:secretsmanager:r:1:secret:memlane/connections-AbC123")
    assert not wildcard_match("arn:aws:secretsmanager:r:1:secret:memlane/connections-??????",
                              "arn:aws:secretsmanager:r:1:secret:memlane/connections-extra-AbC123")
    assert not wildcard_match("arn:aws:es:r:1:domain/d/memlane-chunks*", "arn:aws:es:r:1:domain/d/_cluster/settings")


def test_an_explicit_deny_wins_over_any_allow():
    statements = [allow("s3:*", "*"), Statement.parse({"Effect": "Deny", "Action": "s3:DeleteObjectVersion",
                                                       "Resource": f"{BUCKET}/*"}, "p[1]")]
    decision = evaluate(statements, Need("s3:DeleteObjectVersion", f"{BUCKET}/raw/x"))
    assert not decision.allowed and decision.denied_by == "p[1]"


def test_request_and_resource_tag_conditions():
    create = allow("apigateway:POST", "arn:aws:apigateway:us-east-1::/apikeys", {
        "StringEquals": {"aws:RequestTag/memlane:stage": "dev"},
        "ForAllValues:StringEquals": {"aws:TagKeys": ["memlane:stage"]}})
    tagged = {"aws:RequestTag/memlane:stage": "dev", "aws:TagKeys": ["memlane:stage"]}
    resource = "arn:aws:apigateway:us-east-1::/apikeys"
    assert evaluate([create], Need("apigateway:POST", resource, tagged)).allowed
    # no tag, another stage's tag, or an extra tag key: refused
    assert not evaluate([create], Need("apigateway:POST", resource, {})).allowed
    assert not evaluate([create], Need("apigateway:POST", resource, {**tagged, "aws:RequestTag/memlane:stage": "prod"})).allowed
    assert not evaluate([create], Need("apigateway:POST", resource, {**tagged, "aws:TagKeys": ["memlane:stage", "x"]})).allowed
    delete = allow("apigateway:DELETE", "arn:aws:apigateway:us-east-1::/apikeys/*",
                   {"StringEquals": {"aws:ResourceTag/memlane:stage": "dev"}})
    key = "arn:aws:apigateway:us-east-1::/apikeys/abc123"
    assert evaluate([delete], Need("apigateway:DELETE", key, {"aws:ResourceTag/memlane:stage": "dev"})).allowed
    assert not evaluate([delete], Need("apigateway:DELETE", key, {})).allowed  # an untagged key of the account


def test_condition_keys_ignore_case_and_missing_keys_follow_iam():
    like = allow("bedrock:InvokeModel", "*", {"StringLike": {"bedrock:InferenceProfileArn": "arn:*:profile/us.*"}})
    assert evaluate([like], Need("bedrock:InvokeModel", "m", {"Bedrock:inferenceprofilearn": "arn:x:profile/us.a"})).allowed
    assert not evaluate([like], Need("bedrock:InvokeModel", "m")).allowed  # a missing key fails a positive operator
    not_equals = allow("s3:GetObject", "*", {"StringNotEquals": {"aws:ResourceTag/x": "y"}})
    assert evaluate([not_equals], Need("s3:GetObject", "o")).allowed  # ... and passes a negated one
    if_exists = allow("s3:GetObject", "*", {"StringEqualsIfExists": {"aws:ResourceTag/x": "y"}})
    assert evaluate([if_exists], Need("s3:GetObject", "o")).allowed


def test_what_is_not_evaluated_is_refused_not_guessed():
    with pytest.raises(UnsupportedPolicy):
        Statement.parse({"Effect": "Allow", "NotAction": "s3:*", "Resource": "*"}, "p")
    statement = allow("s3:GetObject", "*", {"DateGreaterThan": {"aws:CurrentTime": "2020-01-01T00:00:00Z"}})
    with pytest.raises(UnsupportedPolicy):
        evaluate([statement], Need("s3:GetObject", "o", {"aws:CurrentTime": "2026-01-01T00:00:00Z"}))
    with pytest.raises(UnsupportedPolicy):
        evaluate([allow("s3:GetObject", "${aws:username}/*")], Need("s3:GetObject", "bob/x"))


def test_a_grant_is_one_action_of_one_statement_on_its_resources():
    statement = allow(["dynamodb:GetItem", "dynamodb:Query"], ["arn:t", "arn:t/index/gsi1"])
    assert [(g.action, g.resources) for g in grants_of([statement])] == [
        ("dynamodb:GetItem", ("arn:t", "arn:t/index/gsi1")), ("dynamodb:Query", ("arn:t", "arn:t/index/gsi1"))]
