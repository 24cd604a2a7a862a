"""Storage: the metadata table (DynamoDB) and the content bucket (S3), with least-privilege grants.

The table's keys, indexes, projections and TTL attribute come from
memlane.adapters.aws.dynamo_schema, the module the adapter itself uses, so the two cannot drift.
Grants name exact actions and exact index ARNs; only S3 object ARNs need a wildcard (object keys are
per document and only known at run time).
"""

from __future__ import annotations

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_s3 as s3
from constructs import Construct

from infra import constants as c
from infra.config import DeploymentConfig
from infra.nag import acknowledge, wildcard_resource_finding
from memlane.adapters.aws import dynamo_schema as schema

TABLE_READ_ACTIONS = ("dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query")
# TransactWriteItems is authorized item by item (PutItem, UpdateItem, DeleteItem); memlane's
# transactions hold no ConditionCheck item, so dynamodb:ConditionCheckItem is not granted.
TABLE_WRITE_ACTIONS = (
    "dynamodb:PutItem",
    "dynamodb:UpdateItem",
    "dynamodb:DeleteItem",
    "dynamodb:BatchWriteItem",
)
OBJECT_KEYS_REASON = (
    "Object keys are derived per organization and document at run time ({org}/{document}/...), so "
    "object-level actions need the bucket's object ARN with '*'; the bucket holds only memlane content."
)


class Storage(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, config: DeploymentConfig) -> None:
        super().__init__(scope, construct_id)
        removal = RemovalPolicy.RETAIN if config.retain_data else RemovalPolicy.DESTROY

        self.table = dynamodb.Table(
            self,
            "MetadataTable",
            partition_key=dynamodb.Attribute(name=schema.PK, type=dynamodb.AttributeType.STRING),
            sort_key=dynamodb.Attribute(name=schema.SK, type=dynamodb.AttributeType.STRING),
            billing_mode=dynamodb.BillingMode.PAY_PER_REQUEST,
            encryption=dynamodb.TableEncryption.AWS_MANAGED,
            point_in_time_recovery_specification=dynamodb.PointInTimeRecoverySpecification(
                point_in_time_recovery_enabled=True
            ),
            time_to_live_attribute=schema.TTL_ATTRIBUTE,
            deletion_protection=config.retain_data,
            removal_policy=removal,
        )
        for index, pk, sk, projection in (
            (schema.GSI1, schema.GSI1_PK, schema.GSI1_SK, schema.GSI1_PROJECTION),
            (schema.GSI2, schema.GSI2_PK, schema.GSI2_SK, schema.GSI2_PROJECTION),
            (schema.GSI3, schema.GSI3_PK, schema.GSI3_SK, schema.GSI3_PROJECTION),
        ):
            self.table.add_global_secondary_index(
                index_name=index,
                partition_key=dynamodb.Attribute(name=pk, type=dynamodb.AttributeType.STRING),
                sort_key=dynamodb.Attribute(name=sk, type=dynamodb.AttributeType.STRING),
                projection_type=dynamodb.ProjectionType[projection],
            )

        # Server access logs go to their own bucket (a bucket cannot log into itself); the target
        # of S3 access logging must use SSE-S3.
        self.access_log_bucket = s3.Bucket(
            self,
            "AccessLogBucket",
            encryption=s3.BucketEncryption.S3_MANAGED,
            enforce_ssl=True,
            minimum_tls_version=1.2,
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            object_ownership=s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
            lifecycle_rules=[
                s3.LifecycleRule(
                    id="expire-access-logs", expiration=Duration.days(c.ACCESS_LOG_EXPIRATION_DAYS)
                )
            ],
            removal_policy=removal,
            auto_delete_objects=not config.retain_data,
        )
        self.content_bucket = s3.Bucket(
            self,
            "ContentBucket",
            encryption=s3.BucketEncryption.S3_MANAGED,
            enforce_ssl=True,
            minimum_tls_version=1.2,
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            object_ownership=s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
            versioned=True,
            lifecycle_rules=[
                s3.LifecycleRule(
                    id="expire-noncurrent-versions",
                    noncurrent_version_expiration=Duration.days(c.NONCURRENT_VERSION_EXPIRATION_DAYS),
                    abort_incomplete_multipart_upload_after=Duration.days(c.ABORT_INCOMPLETE_UPLOAD_DAYS),
                    expired_object_delete_marker=True,
                ),
                s3.LifecycleRule(
                    id="expire-workflow-staging",
                    prefix=c.WORK_PREFIX,
                    expiration=Duration.days(c.WORK_EXPIRATION_DAYS),
                    noncurrent_version_expiration=Duration.days(c.WORK_EXPIRATION_DAYS),
                ),
            ],
            server_access_logs_bucket=self.access_log_bucket,
            server_access_logs_prefix="content/",
            removal_policy=removal,
            auto_delete_objects=not config.retain_data,
        )

    # ------------------------------------------------------------------ table grants

    def index_arn(self, index_name: str) -> str:
        return f"{self.table.table_arn}/index/{index_name}"

    def grant_table_read(self, grantee: iam.IGrantable, *, indexes: tuple[str, ...] = ()) -> None:
        resources = [self.table.table_arn, *(self.index_arn(name) for name in indexes)]
        iam.Grant.add_to_principal(grantee=grantee, actions=list(TABLE_READ_ACTIONS), resource_arns=resources)

    def grant_table_status_update(self, grantee: iam.IGrantable) -> None:
        """Record a document's status (MetadataStore.set_status: one UpdateItem), nothing else written."""
        iam.Grant.add_to_principal(
            grantee=grantee, actions=["dynamodb:UpdateItem"], resource_arns=[self.table.table_arn]
        )

    def grant_table_get_item(self, grantee: iam.IGrantable) -> None:
        """The authorizer looks one key up by its hash, nothing more."""
        iam.Grant.add_to_principal(
            grantee=grantee, actions=["dynamodb:GetItem"], resource_arns=[self.table.table_arn]
        )

    def grant_table_write(self, grantee: iam.IGrantable) -> None:
        iam.Grant.add_to_principal(
            grantee=grantee, actions=list(TABLE_WRITE_ACTIONS), resource_arns=[self.table.table_arn]
        )

    def grant_table_scan(self, grantee: iam.IGrantable) -> None:
        """Operator listings across organizations (the keys function's list without an org)."""
        iam.Grant.add_to_principal(
            grantee=grantee, actions=["dynamodb:Scan"], resource_arns=[self.table.table_arn]
        )

    def grant_table_read_write(self, grantee: iam.IGrantable, *, indexes: tuple[str, ...] = ()) -> None:
        self.grant_table_read(grantee, indexes=indexes)
        self.grant_table_write(grantee)

    # ------------------------------------------------------------------ content grants

    def grant_content_read(self, grantee: iam.IGrantable) -> None:
        # ListBucket lets a missing key answer 404 instead of 403 (the adapters rely on it).
        self._object_grant(grantee, ["s3:GetObject"])
        iam.Grant.add_to_principal(
            grantee=grantee, actions=["s3:ListBucket"], resource_arns=[self.content_bucket.bucket_arn]
        )

    def grant_content_write(self, grantee: iam.IGrantable) -> None:
        self._object_grant(grantee, ["s3:PutObject"])

    def grant_content_delete(self, grantee: iam.IGrantable) -> None:
        """Delete is first-class, and a forget: memlane's S3BlobStore lists a key's versions and
        delete markers and removes each by its version id (DeleteObjects with VersionId, which S3
        authorizes as s3:DeleteObjectVersion), so no plain DeleteObject is ever sent. Granted to
        every function whose code removes a document or rewrites one (the metadata store drops a
        document's S3 copy when its content shrinks back under 100 KB)."""
        self._object_grant(grantee, ["s3:DeleteObjectVersion"])
        iam.Grant.add_to_principal(
            grantee=grantee, actions=["s3:ListBucketVersions"], resource_arns=[self.content_bucket.bucket_arn]
        )

    def _object_grant(self, grantee: iam.IGrantable, actions: list[str]) -> None:
        objects = self.content_bucket.arn_for_objects("*")
        iam.Grant.add_to_principal(grantee=grantee, actions=actions, resource_arns=[objects])
        acknowledge(grantee.grant_principal, wildcard_resource_finding(self, objects), OBJECT_KEYS_REASON)
