"""Search on Amazon S3 Vectors (`-c searchBackend=s3vectors`): no cluster, nothing billed while idle.

* One vector bucket (AWS::S3Vectors::VectorBucket), encrypted with the stack's own KMS key (SSE-KMS,
  rotation on); the S3 Vectors service principal may use the key for this account only (it reads the
  vectors to index them in the background).
* Its indexes are memlane's to create, one per organization, at run time
  (memlane.adapters.aws.s3vectors_layout: why). What CloudFormation cannot say, the bucket's default
  index mode ENHANCED (full-text and hybrid search, filters applied before the search), is set by a
  custom resource backed by memlane's own function (functions/vector_bucket: boto3 with memlane's
  s3vectors model), which on a stack that does not retain data also deletes the indexes before the
  bucket goes.
* IAM names the bucket and its indexes (`…:bucket/NAME/index/*`) and exactly the s3vectors actions the
  adapter uses: readers query, read vectors by key and look an index up; writers also create indexes,
  put and delete vectors. QueryVectors with a filter, full-text queries or metadata also needs
  GetVectors (the API reference's "Permissions"), so readers have both.

The functions get MEMLANE_SEARCH_KIND=s3vectors, MEMLANE_VECTOR_BUCKET and MEMLANE_SEARCH_INDEX (the
index names' prefix).
"""

from __future__ import annotations

from aws_cdk import Aws, CustomResource, Duration, Fn, RemovalPolicy, Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3vectors as s3vectors
from constructs import Construct

from infra import constants as c
from infra.config import DeploymentConfig
from infra.constructs.functions import FunctionFactory, function_role
from infra.nag import acknowledge, wildcard_resource_finding
from memlane.adapters.aws import dynamo_schema as schema

READ_ACTIONS = ("s3vectors:QueryVectors", "s3vectors:GetVectors", "s3vectors:GetIndex")
WRITE_ACTIONS = (*READ_ACTIONS, "s3vectors:PutVectors", "s3vectors:DeleteVectors", "s3vectors:CreateIndex",
                 "s3vectors:UpdateIndexMode")
BUCKET_ACTIONS = ("s3vectors:ListIndexes",)  # a document is deleted from each of its organization's indexes
SETUP_BUCKET_ACTIONS = ("s3vectors:PutVectorBucketDefaultIndexMode", "s3vectors:ListIndexes")
SETUP_INDEX_ACTIONS = ("s3vectors:DeleteIndex",)
INDEX_PATHS_REASON = (
    "memlane creates one S3 Vectors index per organization at run time (an organization's data never "
    "shares an index with another's), so index names are not known at deploy time: the resource is this "
    "stack's vector bucket followed by '/index/*', nothing outside it."
)
S3VECTORS_PRINCIPAL = "indexing.s3vectors.amazonaws.com"


class VectorSearch(Construct):
    kind = "s3vectors"
    endpoint = ""

    def __init__(self, scope: Construct, construct_id: str, *, config: DeploymentConfig) -> None:
        super().__init__(scope, construct_id)
        self.bucket_name = f"{config.resource_prefix}-vectors"
        self.key = kms.Key(
            self, "VectorKey", description=f"{config.resource_prefix}: encrypts the S3 Vectors bucket",
            enable_key_rotation=True, pending_window=Duration.days(7),
            removal_policy=RemovalPolicy.RETAIN if config.retain_data else RemovalPolicy.DESTROY,
        )
        self.key.add_to_resource_policy(iam.PolicyStatement(
            principals=[iam.ServicePrincipal(S3VECTORS_PRINCIPAL)], actions=["kms:Decrypt"], resources=["*"],
            conditions={"StringEquals": {"aws:SourceAccount": Aws.ACCOUNT_ID}}))
        self.bucket = s3vectors.CfnVectorBucket(
            self, "Bucket", vector_bucket_name=self.bucket_name,
            encryption_configuration=s3vectors.CfnVectorBucket.EncryptionConfigurationProperty(
                sse_type="aws:kms", kms_key_arn=self.key.key_arn),
        )
        self.bucket.apply_removal_policy(RemovalPolicy.RETAIN if config.retain_data else RemovalPolicy.DESTROY)
        self.bucket_arn = self.bucket.attr_vector_bucket_arn
        self.indexes_arn = Fn.join("", [self.bucket_arn, "/index/*"])
        self.environment = {schema.ENV_SEARCH_KIND: self.kind, schema.ENV_VECTOR_BUCKET: self.bucket_name,
                            schema.ENV_SEARCH_INDEX_ALIAS: c.SEARCH_INDEX_ALIAS}
        self._retain = config.retain_data

    def prepare(self, factory: FunctionFactory) -> None:
        """The custom resource that sets the bucket's default index mode (and empties it on delete)."""
        function = factory.create(self, c.VECTOR_BUCKET_FUNCTION)
        role = function_role(function)
        iam.Grant.add_to_principal(grantee=role, actions=list(SETUP_BUCKET_ACTIONS), resource_arns=[self.bucket_arn])
        iam.Grant.add_to_principal(grantee=role, actions=list(SETUP_INDEX_ACTIONS), resource_arns=[self.indexes_arn])
        acknowledge(role, wildcard_resource_finding(self, self.indexes_arn), INDEX_PATHS_REASON)
        setup = CustomResource(
            self, "BucketSetup", service_token=function.function_arn, resource_type="Custom::MemlaneVectorBucket",
            properties={"VectorBucketName": self.bucket_name, "EmptyOnDelete": "false" if self._retain else "true"},
        )
        setup.node.add_dependency(self.bucket)
        setup.node.add_dependency(role)

    def grant_read(self, role: iam.IRole) -> None:
        self._grant(role, READ_ACTIONS)

    def grant_write(self, role: iam.IRole) -> None:
        self._grant(role, WRITE_ACTIONS)

    def _grant(self, role: iam.IRole, actions: tuple[str, ...]) -> None:
        iam.Grant.add_to_principal(grantee=role, actions=list(actions), resource_arns=[self.indexes_arn])
        iam.Grant.add_to_principal(grantee=role, actions=list(BUCKET_ACTIONS), resource_arns=[self.bucket_arn])
        # SSE-KMS: what the service does with the key on the function's behalf, through S3 Vectors only.
        iam.Grant.add_to_principal(
            grantee=role, actions=["kms:Decrypt", "kms:GenerateDataKey"], resource_arns=[self.key.key_arn],
            conditions={"StringEquals": {"kms:ViaService": f"s3vectors.{Stack.of(self).region}.amazonaws.com"}})
        acknowledge(role, wildcard_resource_finding(self, self.indexes_arn), INDEX_PATHS_REASON)
