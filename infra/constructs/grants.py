"""Grants narrower than CDK's helpers: exactly the actions memlane's code sends.

CDK's `queue.grant_send_messages` adds sqs:GetQueueAttributes and sqs:GetQueueUrl, and
`secret.grant_read` adds secretsmanager:DescribeSecret; memlane sends to a queue by the URL its
environment gives and reads a secret's value by name, nothing more (the permission trace,
tests/infra/test_permission_trace.py, shows which calls each function makes).
"""

from __future__ import annotations

from aws_cdk import aws_iam as iam
from aws_cdk import aws_secretsmanager as secretsmanager
from aws_cdk import aws_sqs as sqs


def grant_send(queue: sqs.IQueue, grantee: iam.IGrantable) -> None:
    """Send to this queue (SQS-managed encryption: no key to grant)."""
    iam.Grant.add_to_principal(grantee=grantee, actions=["sqs:SendMessage"], resource_arns=[queue.queue_arn])


def grant_secret_value(secret: secretsmanager.ISecret, grantee: iam.IGrantable) -> None:
    """Read this secret's value. A secret known by name only (the operator creates it) is matched
    with the six characters Secrets Manager appends to its ARN, as CDK's own grant does."""
    arn = secret.secret_full_arn or f"{secret.secret_arn}-??????"
    iam.Grant.add_to_principal(grantee=grantee, actions=["secretsmanager:GetSecretValue"], resource_arns=[arn])
