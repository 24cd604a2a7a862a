"""WebApp: the built app in a private bucket behind CloudFront (OAC), the API on the same
distribution, the strict security headers, and the SPA fallback that leaves API paths alone."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from infra_helpers import as_list, function_by_handler, function_role, join_to_text, role_policies

from infra import constants as c
from infra.config import ConfigError
from infra.constructs.webapp import API_PATH_PATTERNS, spa_rewrite_function_code
from memlane.config.aws import ENV_WEBAPP_URL
from memlane.webapp_policy import CONTENT_SECURITY_POLICY

pytestmark = pytest.mark.infra

CACHING_DISABLED = "4135ea2d-6df8-44a3-9df3-4b5a84be39ad"  # AWS managed cache policy ids
CACHING_OPTIMIZED = "658327ea-f89d-4fab-a63d-7e88639e58f6"
ALL_VIEWER_EXCEPT_HOST = "b689b0a8-53d0-40ab-baf2-68738e2966ac"


def _distribution(synth) -> dict:
    (distribution,) = synth.of_type("AWS::CloudFront::Distribution").values()
    return distribution["Properties"]["DistributionConfig"]


def _refs(value) -> list:
    if isinstance(value, dict):
        return [value] if set(value) == {"Ref"} else [r for v in value.values() for r in _refs(v)]
    if isinstance(value, list):
        return [r for v in value for r in _refs(v)]
    return []


def _app_bucket(synth) -> tuple[str, dict]:
    (found,) = [(k, v) for k, v in synth.of_type("AWS::S3::Bucket").items() if k.startswith("WebAppAppBucket")]
    return found


def test_the_app_bucket_is_private_and_read_by_this_distribution_only(dev):
    bucket_id, bucket = _app_bucket(dev)
    props = bucket["Properties"]
    assert props["PublicAccessBlockConfiguration"] == {
        "BlockPublicAcls": True, "BlockPublicPolicy": True, "IgnorePublicAcls": True, "RestrictPublicBuckets": True}
    assert "WebsiteConfiguration" not in props
    assert props["LoggingConfiguration"]["LogFilePrefix"] == "webapp/"
    (policy,) = [p for p in dev.of_type("AWS::S3::BucketPolicy").values()
                 if p["Properties"]["Bucket"] == {"Ref": bucket_id}]
    statements = policy["Properties"]["PolicyDocument"]["Statement"]
    (read,) = [s for s in statements if s["Effect"] == "Allow" and s.get("Principal") == {"Service": "cloudfront.amazonaws.com"}]
    assert read["Action"] == "s3:GetObject"
    (distribution_id,) = dev.of_type("AWS::CloudFront::Distribution")
    assert f"distribution/<{distribution_id}>" in join_to_text(read["Condition"]["StringEquals"]["AWS:SourceArn"])
    assert any(s["Effect"] == "Deny" and s["Condition"] == {"Bool": {"aws:SecureTransport": "false"}} for s in statements)


def test_cloudfront_reaches_the_bucket_through_origin_access_control(dev):
    config = _distribution(dev)
    (oac,) = dev.of_type("AWS::CloudFront::OriginAccessControl").values()
    assert oac["Properties"]["OriginAccessControlConfig"]["SigningBehavior"] == "always"
    s3_origin = next(o for o in config["Origins"] if "S3OriginConfig" in o)
    assert s3_origin["S3OriginConfig"]["OriginAccessIdentity"] == ""
    assert "OriginAccessControlId" in s3_origin


def test_every_app_response_carries_the_strict_policy_of_the_local_server(dev):
    (policy,) = dev.of_type("AWS::CloudFront::ResponseHeadersPolicy").values()
    config = policy["Properties"]["ResponseHeadersPolicyConfig"]
    security = config["SecurityHeadersConfig"]
    csp = security["ContentSecurityPolicy"]["ContentSecurityPolicy"]
    assert csp == CONTENT_SECURITY_POLICY
    assert "unsafe-inline" not in csp and "unsafe-eval" not in csp and "script-src 'self'" in csp
    assert security["FrameOptions"]["FrameOption"] == "DENY"
    assert security["ContentTypeOptions"]["Override"] is True
    assert security["StrictTransportSecurity"]["AccessControlMaxAgeSec"] >= 31_536_000
    assert security["ReferrerPolicy"]["ReferrerPolicy"] == "no-referrer"
    default = _distribution(dev)["DefaultCacheBehavior"]
    assert default["ViewerProtocolPolicy"] == "redirect-to-https"
    assert default["CachePolicyId"] == CACHING_OPTIMIZED
    assert "ResponseHeadersPolicyId" in default


def test_the_api_is_on_the_same_distribution_uncached_with_the_key_forwarded(dev):
    config = _distribution(dev)
    behaviours = {b["PathPattern"]: b for b in config["CacheBehaviors"]}
    assert set(behaviours) == set(API_PATH_PATTERNS) and "/v3/*" in behaviours
    api_origin = next(o for o in config["Origins"] if "CustomOriginConfig" in o)
    (rest_api_id,) = dev.of_type("AWS::ApiGateway::RestApi")
    assert join_to_text(api_origin["DomainName"]) == f"<{rest_api_id}>.execute-api.<AWS::Region>.<AWS::URLSuffix>"
    # requests go to the stage's paths, named, not referenced: the stage depends on the API function,
    # whose environment names this distribution (MEMLANE_WEBAPP_URL)
    assert api_origin["OriginPath"] == "/dev"
    assert api_origin["CustomOriginConfig"]["OriginProtocolPolicy"] == "https-only"
    for behaviour in behaviours.values():
        assert behaviour["TargetOriginId"] == api_origin["Id"]
        assert behaviour["CachePolicyId"] == CACHING_DISABLED  # a response never serves another key
        assert behaviour["OriginRequestPolicyId"] == ALL_VIEWER_EXCEPT_HOST  # Authorization passes when uncached
        assert {"GET", "POST", "PATCH", "DELETE", "OPTIONS"} <= set(behaviour["AllowedMethods"])
        assert behaviour["ViewerProtocolPolicy"] == "https-only"


def test_the_built_app_is_deployed_into_the_bucket_and_the_url_is_an_output(dev):
    bucket_id, _ = _app_bucket(dev)
    (deployment,) = dev.of_type("Custom::CDKBucketDeployment").values()
    props = deployment["Properties"]
    assert props["DestinationBucketName"] == {"Ref": bucket_id}
    assert props["Prune"] is True
    (distribution_id,) = dev.of_type("AWS::CloudFront::Distribution")
    assert props["DistributionId"] == {"Ref": distribution_id}
    assert "WebAppUrl" in dev.template_json["Outputs"]


def test_the_api_function_may_register_keys_in_the_usage_plan(dev):
    api_id, api = function_by_handler(dev, c.API_FUNCTION.handler)
    (plan_id,) = dev.of_type("AWS::ApiGateway::UsagePlan")
    # by name (the plan is deployed after the function, which may not reference it), in a policy of its own
    assert api["Properties"]["Environment"]["Variables"][c.ENV_USAGE_PLAN_NAME] == "memlane-dev-per-key"
    assert dev.props(plan_id)["UsagePlanName"] == "memlane-dev-per-key"
    statements = role_policies(dev, function_role(api))
    (lookup,) = [s for s in statements if s["Action"] == "apigateway:GET"]
    assert join_to_text(lookup["Resource"]).endswith("::/usageplans")
    posts = [join_to_text(r) for s in statements if s["Action"] == "apigateway:POST" for r in as_list(s["Resource"])]
    assert any(r.endswith(f"::/usageplans/<{plan_id}>/keys") for r in posts)
    (delete,) = [s for s in statements if s["Action"] == "apigateway:DELETE"]
    assert join_to_text(delete["Resource"]).endswith("::/apikeys/*")


def test_the_api_function_sends_connection_flows_back_to_this_web_app(dev):
    # A provider sends the browser back to the API's /oauth/callback, which sends it on to the web app's
    # confirmation page (memlane.connections.flow_binding): the API function is told this distribution's URL
    _, api = function_by_handler(dev, c.API_FUNCTION.handler)
    (distribution_id,) = dev.of_type("AWS::CloudFront::Distribution")
    url = api["Properties"]["Environment"]["Variables"][ENV_WEBAPP_URL]
    assert join_to_text(url) == f"https://<{distribution_id}.DomainName>"


@pytest.mark.skipif(shutil.which("node") is None, reason="node runs the CloudFront Function's JavaScript")
def test_the_spa_fallback_serves_index_html_for_app_routes_and_the_apps_404_for_other_pages(dev, fake_webapp):
    (function,) = dev.of_type("AWS::CloudFront::Function").values()
    code = function["Properties"]["FunctionCode"]
    index_html = (fake_webapp / "index.html").read_text()
    assert code == spa_rewrite_function_code(index_html)
    assert function["Properties"]["FunctionConfig"]["Runtime"] == "cloudfront-js-2.0"
    routes = ["/", "/login", "/projects", "/projects/abc", "/projects/abc/settings", "/search", "/memories/1f2e",
              "/graph", "/settings", "/deletions/5e1a"]
    pages = ["/nope", "/memories/a/b", "/settings/", "/v3", "/no/such/page"]
    files = ["/assets/index-abc.js", "/favicon.svg", "/assets/missing-0000.css"]
    script = code + f"\nconsole.log(JSON.stringify({json.dumps(routes + pages + files)}"
    script += ".map(u => handler({request: {uri: u, method: 'GET', headers: {}}}))))"
    out = subprocess.run(["node", "-e", script], capture_output=True, text=True, timeout=60, check=True).stdout
    answers = dict(zip(routes + pages + files, json.loads(out.strip().splitlines()[-1]), strict=True))
    # the app's routes are its index.html from the bucket (cached)
    assert {u: a.get("uri") for u, a in answers.items() if u in routes} == dict.fromkeys(routes, "/index.html")
    # any other page is the app's index.html with status 404, the same security headers, uncached
    for uri in pages:
        answer = answers[uri]
        assert (answer["statusCode"], answer["body"]) == (404, {"encoding": "text", "data": index_html}), uri
        headers = {k: v["value"] for k, v in answer["headers"].items()}
        assert headers["content-security-policy"] == CONTENT_SECURITY_POLICY
        assert headers["content-type"] == "text/html; charset=utf-8" and headers["cache-control"] == "no-cache"
        assert headers["x-frame-options"] == "DENY" and headers["strict-transport-security"].startswith("max-age=")
    # the build's files (or a missing one) are the bucket's answer, unchanged
    assert {u: a.get("uri") for u, a in answers.items() if u in files} == {u: u for u in files}


def test_the_api_keeps_its_json_errors_behind_the_distribution(dev):
    config = _distribution(dev)
    # no distribution-wide error page (it would answer the API's 404s with HTML), and the
    # fallback runs on the app's behaviour only
    assert "CustomErrorResponses" not in config
    assert config["DefaultCacheBehavior"]["FunctionAssociations"][0]["EventType"] == "viewer-request"
    assert all("FunctionAssociations" not in b for b in config["CacheBehaviors"])


def test_an_index_html_too_large_for_a_cloudfront_function_fails_the_synthesis():
    with pytest.raises(ConfigError, match="index.html"):
        spa_rewrite_function_code("<!doctype html>" + "x" * 11_000)
