"""Search: the k-NN + BM25 index behind recall, on OpenSearch or Amazon S3 Vectors.

Three backends, chosen with `-c search_backend=` (or `-c searchBackend=`):

* managed (default): one OpenSearch Service domain. Low idle cost (one t3.small.search node). Public
  HTTPS endpoint, no VPC: every request is SigV4-signed and the domain's access policy names only
  the functions' roles; TLS 1.2+, HTTPS enforced, node-to-node encryption, encryption at rest,
  slow and error logs to CloudWatch. Keeping the functions out of a VPC avoids NAT gateways (about
  $32/month each) and VPC cold starts for a workload that needs no private network.
* serverless: an OpenSearch Serverless VECTORSEARCH collection with its encryption policy (AWS
  owned key), network policy (public endpoint, no dashboards) and a data access policy naming only
  the functions' roles.

* s3vectors: an Amazon S3 Vectors bucket, an index per organization, nothing billed while idle
  (infra/constructs/vector_search.py).

OpenSearch functions get `MEMLANE_SEARCH_ENDPOINT` (an https URL), `MEMLANE_SEARCH_KIND` and
`MEMLANE_SEARCH_INDEX` (`environment`); readers and writers get different actions.
"""

from __future__ import annotations

import json
from typing import Any, Protocol

from aws_cdk import Aws, Fn, RemovalPolicy, Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_logs as logs
from aws_cdk import aws_opensearchserverless as aoss
from aws_cdk import aws_opensearchservice as opensearch
from constructs import Construct

from infra import constants as c
from infra.config import DeploymentConfig
from infra.constructs.functions import log_removal_policy, retention_days
from infra.constructs.vector_search import VectorSearch
from infra.nag import acknowledge, wildcard_resource_finding
from memlane.adapters.aws import dynamo_schema as schema

# What memlane's OpenSearchIndex sends, on its own paths only (the alias, the `<alias>-v<n>` indices
# behind it, `_alias/<alias>`): reads look indices and the alias up (GET, HEAD) and search (POST to
# _search, _msearch, _count); writes also create the index, its alias and mapping (PUT) and send
# _bulk, _delete_by_query and _refresh (POST). No DELETE and no PATCH: a function never deletes an
# index (`memlane reindex` does, with the operator's credentials), and nothing reaches
# _cluster/settings or another index.
READ_HTTP_ACTIONS = ("es:ESHttpGet", "es:ESHttpHead")
SEARCH_HTTP_ACTION = "es:ESHttpPost"
SEARCH_ENDPOINTS = ("_search", "_msearch", "_count")
WRITE_HTTP_ACTIONS = ("es:ESHttpGet", "es:ESHttpHead", "es:ESHttpPost", "es:ESHttpPut")
AOSS_READ_COLLECTION = ("aoss:DescribeCollectionItems",)
AOSS_READ_INDEX = ("aoss:DescribeIndex", "aoss:ReadDocument")
AOSS_WRITE_COLLECTION = (*AOSS_READ_COLLECTION, "aoss:CreateCollectionItems", "aoss:UpdateCollectionItems")
AOSS_WRITE_INDEX = (*AOSS_READ_INDEX, "aoss:CreateIndex", "aoss:UpdateIndex", "aoss:WriteDocument")

DOMAIN_PATHS_REASON = (
    "OpenSearch HTTP permissions apply to request paths under the domain: the grant names memlane's alias, "
    "the versioned indices behind it (<alias>-v<n>, created by reindex) and the paths under them (_doc, "
    "_search, _bulk, _mapping); nothing else in the domain."
)


class Search(Protocol):
    """What the other constructs use, whatever the backend."""

    kind: str
    endpoint: str  # "" where there is none (S3 Vectors)

    @property
    def environment(self) -> dict[str, str]:
        """What every function is told about the search index."""
        ...

    def grant_read(self, role: iam.IRole) -> None: ...

    def grant_write(self, role: iam.IRole) -> None: ...


class OpenSearchEnvironment:
    kind: str
    endpoint: str

    @property
    def environment(self) -> dict[str, str]:
        return {schema.ENV_SEARCH_ENDPOINT: self.endpoint, schema.ENV_SEARCH_KIND: self.kind,
                schema.ENV_SEARCH_INDEX_ALIAS: c.SEARCH_INDEX_ALIAS}


class ManagedSearch(OpenSearchEnvironment, Construct):
    kind = "managed"

    def __init__(self, scope: Construct, construct_id: str, *, config: DeploymentConfig) -> None:
        super().__init__(scope, construct_id)
        self.domain_name = config.resource_prefix
        self.domain_arn = Stack.of(self).format_arn(
            service="es", resource="domain", resource_name=self.domain_name
        )
        self._readers: list[iam.IRole] = []
        self._writers: list[iam.IRole] = []

        log_group = logs.LogGroup(
            self,
            "DomainLogs",
            retention=retention_days(config.log_retention_days),
            removal_policy=log_removal_policy(config),
        )
        logs_policy = logs.ResourcePolicy(
            self,
            "DomainLogsPolicy",
            resource_policy_name=f"{self.domain_name}-opensearch-logs",
            policy_statements=[
                iam.PolicyStatement(
                    principals=[iam.ServicePrincipal("es.amazonaws.com")],
                    actions=["logs:CreateLogStream", "logs:PutLogEvents"],
                    resources=[log_group.log_group_arn],
                    conditions={
                        "StringEquals": {"aws:SourceAccount": Aws.ACCOUNT_ID},
                        "ArnLike": {"aws:SourceArn": self.domain_arn},
                    },
                )
            ],
        )

        count = config.search_instance_count
        zone_count = 3 if count % 3 == 0 else 2
        self.access_policy = iam.PolicyDocument()
        self.domain = opensearch.CfnDomain(
            self,
            "Domain",
            domain_name=self.domain_name,
            engine_version=config.search_engine_version,
            cluster_config=opensearch.CfnDomain.ClusterConfigProperty(
                instance_type=config.search_instance_type,
                instance_count=count,
                dedicated_master_enabled=False,
                zone_awareness_enabled=count > 1,
                zone_awareness_config=(
                    opensearch.CfnDomain.ZoneAwarenessConfigProperty(availability_zone_count=zone_count)
                    if count > 1
                    else None
                ),
            ),
            ebs_options=opensearch.CfnDomain.EBSOptionsProperty(
                ebs_enabled=True, volume_type="gp3", volume_size=config.search_volume_size_gb
            ),
            encryption_at_rest_options=opensearch.CfnDomain.EncryptionAtRestOptionsProperty(enabled=True),
            node_to_node_encryption_options=opensearch.CfnDomain.NodeToNodeEncryptionOptionsProperty(
                enabled=True
            ),
            domain_endpoint_options=opensearch.CfnDomain.DomainEndpointOptionsProperty(
                enforce_https=True, tls_security_policy=c.OPENSEARCH_TLS_POLICY
            ),
            access_policies=self.access_policy,
            log_publishing_options={
                log_type: opensearch.CfnDomain.LogPublishingOptionProperty(
                    cloud_watch_logs_log_group_arn=log_group.log_group_arn, enabled=True
                )
                for log_type in ("SEARCH_SLOW_LOGS", "INDEX_SLOW_LOGS", "ES_APPLICATION_LOGS")
            },
            software_update_options=opensearch.CfnDomain.SoftwareUpdateOptionsProperty(
                auto_software_update_enabled=True
            ),
        )
        self.domain.node.add_dependency(logs_policy)
        self.domain.apply_removal_policy(
            RemovalPolicy.RETAIN if config.retain_data else RemovalPolicy.DESTROY
        )
        self.endpoint = Fn.join("", ["https://", self.domain.attr_domain_endpoint])

        acknowledge(
            self.domain,
            "AwsSolutions-OS1",
            "Public endpoint by design: every request is SigV4-signed and the access policy admits only the "
            "memlane function roles; a VPC would need NAT gateways (~$32/month each) and VPC-attached "
            "functions for no gain in this threat model (see docs/deploy.md).",
        )
        acknowledge(
            self.domain,
            "AwsSolutions-OS3",
            "Access is restricted by IAM principal (the function roles, SigV4), not by source IP: Lambda "
            "has no stable egress addresses outside a VPC.",
        )
        acknowledge(
            self.domain,
            "AwsSolutions-OS4",
            "No dedicated master nodes: a small (1-2 data node) domain for one application's index; "
            "AWS recommends dedicated masters from three data nodes up. Raise search_instance_count and "
            "revisit for large deployments.",
        )
        if count == 1:
            acknowledge(
                self.domain,
                "AwsSolutions-OS7",
                "Single-node default keeps the idle cost low (~$27/month); zone awareness needs two or more "
                "nodes and is enabled automatically when search_instance_count > 1. The index is a "
                "projection of DynamoDB and can be rebuilt (memlane reindex).",
            )

    def index_paths(self) -> list[str]:
        """Every request path memlane's index adapter uses: the alias, its versioned indices and
        whatever is under them, and the alias lookup."""
        alias = c.SEARCH_INDEX_ALIAS
        base = self.domain_arn
        return [f"{base}/{alias}", f"{base}/{alias}/*", f"{base}/{alias}-v*", f"{base}/_alias/{alias}"]

    def grant_read(self, role: iam.IRole) -> None:
        alias = c.SEARCH_INDEX_ALIAS
        self._grant(role, [(READ_HTTP_ACTIONS, self.index_paths()),
                           ((SEARCH_HTTP_ACTION,), [f"{self.domain_arn}/{alias}/{e}" for e in SEARCH_ENDPOINTS])])
        self._readers.append(role)

    def grant_write(self, role: iam.IRole) -> None:
        self._grant(role, [(WRITE_HTTP_ACTIONS, self.index_paths())])
        self._writers.append(role)

    def _grant(self, role: iam.IRole, grants: list[tuple[tuple[str, ...], list[str]]]) -> None:
        for actions, resources in grants:
            iam.Grant.add_to_principal(grantee=role, actions=list(actions), resource_arns=resources)
            # The domain's resource policy admits exactly the same principals for the same actions.
            self.access_policy.add_statements(
                iam.PolicyStatement(principals=[iam.ArnPrincipal(role.role_arn)], actions=list(actions),
                                    resources=resources)
            )
            for resource in resources:
                if "*" in resource:
                    acknowledge(role, wildcard_resource_finding(self, resource), DOMAIN_PATHS_REASON)


class ServerlessSearch(OpenSearchEnvironment, Construct):
    kind = "serverless"

    def __init__(self, scope: Construct, construct_id: str, *, config: DeploymentConfig) -> None:
        super().__init__(scope, construct_id)
        self.collection_name = config.resource_prefix
        self._readers: list[iam.IRole] = []
        self._writers: list[iam.IRole] = []
        collection_rule = {"ResourceType": "collection", "Resource": [f"collection/{self.collection_name}"]}

        encryption = aoss.CfnSecurityPolicy(
            self,
            "EncryptionPolicy",
            name=f"{self.collection_name}-enc",
            type="encryption",
            description="memlane: encrypt the collection at rest with an AWS owned key",
            policy=json.dumps({"Rules": [collection_rule], "AWSOwnedKey": True}),
        )
        network = aoss.CfnSecurityPolicy(
            self,
            "NetworkPolicy",
            name=f"{self.collection_name}-net",
            type="network",
            description="memlane: HTTPS endpoint for SigV4-signed requests; no dashboards",
            policy=json.dumps([{"Rules": [collection_rule], "AllowFromPublic": True}]),
        )
        self.collection = aoss.CfnCollection(
            self,
            "Collection",
            name=self.collection_name,
            type="VECTORSEARCH",
            standby_replicas=config.search_standby_replicas,
            description="memlane chunks: k-NN vectors and BM25 text",
        )
        self.collection.node.add_dependency(encryption)
        self.collection.node.add_dependency(network)
        self.collection.apply_removal_policy(
            RemovalPolicy.RETAIN if config.retain_data else RemovalPolicy.DESTROY
        )
        self.data_access_policy = aoss.CfnAccessPolicy(
            self,
            "DataAccessPolicy",
            name=f"{self.collection_name}-data",
            type="data",
            description="memlane: the function roles, readers and writers separately",
            # Rewritten on every grant (see _grant), so it always names exactly the granted roles.
            policy=json.dumps([]),
        )
        self.endpoint = self.collection.attr_collection_endpoint

    def data_access_rules(self) -> list[dict[str, Any]]:
        rules = []
        for roles, collection_perms, index_perms in (
            (self._readers, AOSS_READ_COLLECTION, AOSS_READ_INDEX),
            (self._writers, AOSS_WRITE_COLLECTION, AOSS_WRITE_INDEX),
        ):
            if roles:
                rules.append(
                    {
                        "Rules": [
                            {
                                "ResourceType": "collection",
                                "Resource": [f"collection/{self.collection_name}"],
                                "Permission": list(collection_perms),
                            },
                            {
                                "ResourceType": "index",
                                "Resource": [f"index/{self.collection_name}/*"],
                                "Permission": list(index_perms),
                            },
                        ],
                        "Principal": [role.role_arn for role in roles],
                    }
                )
        return rules

    def grant_read(self, role: iam.IRole) -> None:
        self._readers.append(role)
        self._grant(role)

    def grant_write(self, role: iam.IRole) -> None:
        self._writers.append(role)
        self._grant(role)

    def _grant(self, role: iam.IRole) -> None:
        # IAM lets the role call the collection's API; the data access policy decides what it may do.
        iam.Grant.add_to_principal(
            grantee=role, actions=["aoss:APIAccessAll"], resource_arns=[self.collection.attr_arn]
        )
        self.data_access_policy.policy = Stack.of(self).to_json_string(self.data_access_rules())


def create_search(scope: Construct, construct_id: str, *, config: DeploymentConfig) -> Search:
    if config.search_backend == "s3vectors":
        return VectorSearch(scope, construct_id, config=config)
    if config.search_backend == "serverless":
        return ServerlessSearch(scope, construct_id, config=config)
    return ManagedSearch(scope, construct_id, config=config)
