"""Search: the managed OpenSearch domain (default) and the Serverless collection (by context)."""

from __future__ import annotations

import json

import pytest
from aws_cdk.assertions import Match
from infra_helpers import (
    as_list,
    function_by_handler,
    function_role,
    join_to_text,
    memlane_functions,
    role_policies,
)

from infra import constants as c
from memlane.adapters.aws import dynamo_schema as schema

pytestmark = pytest.mark.infra

# Who talks to the search index, and how.
SEARCH_WRITERS = {
    c.API_FUNCTION.handler,
    c.WRITE_FUNCTION.handler,
    c.FORGET_FUNCTION.handler,
    c.PAGE_WORKER_FUNCTION.handler,  # indexes documentation pages itself
    c.CONNECTION_SYNC_FUNCTION.handler,  # writes and removes what a connection syncs
    c.EXTRACTION_CONSUMER_FUNCTION.handler,  # finds similar facts, writes new ones
}


def _domain(synth):
    (domain,) = synth.of_type("AWS::OpenSearchService::Domain").values()
    return domain["Properties"]


def test_managed_domain_is_encrypted_https_only_and_logs_to_cloudwatch(dev):
    domain = _domain(dev)
    assert domain["EncryptionAtRestOptions"] == {"Enabled": True}
    assert domain["NodeToNodeEncryptionOptions"] == {"Enabled": True}
    assert domain["DomainEndpointOptions"] == {
        "EnforceHTTPS": True,
        "TLSSecurityPolicy": c.OPENSEARCH_TLS_POLICY,
    }
    assert set(domain["LogPublishingOptions"]) == {
        "SEARCH_SLOW_LOGS",
        "INDEX_SLOW_LOGS",
        "ES_APPLICATION_LOGS",
    }
    assert all(option["Enabled"] for option in domain["LogPublishingOptions"].values())
    assert "VPCOptions" not in domain  # public endpoint + IAM, see docs/deploy.md
    assert len(dev.of_type("AWS::Logs::ResourcePolicy")) == 1


def test_managed_domain_defaults_to_one_small_node_with_gp3(dev):
    domain = _domain(dev)
    assert domain["ClusterConfig"]["InstanceType"] == "t3.small.search"
    assert domain["ClusterConfig"]["InstanceCount"] == 1
    assert domain["ClusterConfig"]["ZoneAwarenessEnabled"] is False
    assert domain["EBSOptions"] == {"EBSEnabled": True, "VolumeType": "gp3", "VolumeSize": 10}


def test_two_nodes_spread_over_two_availability_zones(prod):
    cluster = _domain(prod)["ClusterConfig"]
    assert cluster["InstanceCount"] == 2
    assert cluster["ZoneAwarenessEnabled"] is True
    assert cluster["ZoneAwarenessConfig"] == {"AvailabilityZoneCount": 2}


def test_domain_access_policy_admits_only_the_function_roles_that_use_search(dev):
    policy = _domain(dev)["AccessPolicies"]
    principals = set()
    for statement in policy["Statement"]:
        assert statement["Effect"] == "Allow"
        assert "Condition" not in statement
        for principal in (
            statement["Principal"]["AWS"]
            if isinstance(statement["Principal"]["AWS"], list)
            else [statement["Principal"]["AWS"]]
        ):
            principals.add(principal["Fn::GetAtt"][0])
    expected = {function_role(function_by_handler(dev, handler)[1]) for handler in SEARCH_WRITERS}
    assert principals == expected
    assert "*" not in json.dumps(policy["Statement"][0]["Principal"])


def test_only_search_users_get_opensearch_http_permissions(dev):
    for _, function in memlane_functions(dev).items():
        actions = {
            action
            for statement in role_policies(dev, function_role(function))
            for action in (
                statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
            )
        }
        uses_search = function["Properties"]["Handler"] in SEARCH_WRITERS
        assert bool({a for a in actions if a.startswith("es:")}) == uses_search, function["Properties"][
            "Handler"
        ]
        if function["Properties"]["Handler"] == c.WRITE_FUNCTION.handler:
            assert {"es:ESHttpPut", "es:ESHttpPost"} <= actions


def test_search_grants_name_memlane_s_index_and_alias_paths_only(dev):
    # Given every es: grant, in the functions' roles and in the domain's access policy
    domain = "arn:<AWS::Partition>:es:<AWS::Region>:<AWS::AccountId>:domain/memlane-dev"
    alias = c.SEARCH_INDEX_ALIAS
    paths = {f"{domain}/{alias}", f"{domain}/{alias}/*", f"{domain}/{alias}-v*", f"{domain}/_alias/{alias}",
             *(f"{domain}/{alias}/{e}" for e in ("_search", "_msearch", "_count"))}
    statements = [s for f in memlane_functions(dev).values() for s in role_policies(dev, function_role(f))]
    (opensearch_domain,) = dev.of_type("AWS::OpenSearchService::Domain").values()
    statements += opensearch_domain["Properties"]["AccessPolicies"]["Statement"]
    es = [s for s in statements if any(str(a).startswith("es:") for a in as_list(s["Action"]))]
    assert es
    for statement in es:
        # Then each names memlane's alias and index paths, never the domain or all of it (_cluster/settings,
        # another index), and no request method memlane never sends (DELETE: deleting an index; PATCH)
        assert {join_to_text(r) for r in as_list(statement["Resource"])} <= paths, statement["Resource"]
        assert set(as_list(statement["Action"])) <= {"es:ESHttpGet", "es:ESHttpHead", "es:ESHttpPost", "es:ESHttpPut"}


def test_functions_are_told_the_search_endpoint_kind_and_index(dev, serverless):
    for synth, kind in ((dev, "managed"), (serverless, "serverless")):
        for function in memlane_functions(synth).values():
            env = function["Properties"]["Environment"]["Variables"]
            assert env[schema.ENV_SEARCH_KIND] == kind
            assert env[schema.ENV_SEARCH_INDEX_ALIAS] == c.SEARCH_INDEX_ALIAS
            assert schema.ENV_SEARCH_ENDPOINT in env


def test_serverless_collection_is_a_vector_search_collection_behind_three_policies(serverless):
    template = serverless.template
    assert not serverless.of_type("AWS::OpenSearchService::Domain")
    template.has_resource(
        "AWS::OpenSearchServerless::Collection",
        {
            "Properties": {"Name": "memlane-dev", "Type": "VECTORSEARCH", "StandbyReplicas": "DISABLED"},
            "DependsOn": Match.array_with([Match.string_like_regexp("SearchEncryptionPolicy")]),
        },
    )
    policies = {
        p["Properties"]["Type"]: p["Properties"]
        for p in serverless.of_type("AWS::OpenSearchServerless::SecurityPolicy").values()
    }
    assert json.loads(policies["encryption"]["Policy"])["AWSOwnedKey"] is True
    network = json.loads(policies["network"]["Policy"])
    assert network[0]["Rules"] == [{"ResourceType": "collection", "Resource": ["collection/memlane-dev"]}]
    template.resource_count_is("AWS::OpenSearchServerless::AccessPolicy", 1)


def test_serverless_data_access_policy_names_exactly_the_search_roles(serverless):
    (access,) = serverless.of_type("AWS::OpenSearchServerless::AccessPolicy").values()
    rendered = json.dumps(access["Properties"]["Policy"])
    expected = {function_role(function_by_handler(serverless, handler)[1]) for handler in SEARCH_WRITERS}
    mentioned = {r for r in serverless.of_type("AWS::IAM::Role") if f'"{r}"' in rendered}
    assert mentioned == expected
    for role in expected:
        actions = [s["Action"] for s in role_policies(serverless, role)]
        assert "aoss:APIAccessAll" in actions
