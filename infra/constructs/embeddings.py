"""Model access: which functions may call the embedding (and summary) model, and how.

* bedrock: `bedrock:InvokeModel` on the one foundation model (Titan Text Embeddings V2 by default).
  Summaries use memlane's local extractive method, so no model is granted for them.
* openai: read access to one Secrets Manager secret, looked up by name at run time
  (`MEMLANE_OPENAI_SECRET_NAME`). The secret is created by the operator, never by the stack, so the
  key never appears in a template (docs/deploy.md shows the command).

Recall's optional rerank stage (context `rerank_model`, off by default), for the API function only
(recall runs there): `bedrock:InvokeModel` on that one reranker model, and `bedrock:Rerank`, which
supports no resource-level permissions, on '*'.
"""

from __future__ import annotations

from aws_cdk import Aws, Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_secretsmanager as secretsmanager
from constructs import Construct

from infra import constants as c
from infra.config import DeploymentConfig
from infra.constructs.grants import grant_secret_value
from infra.nag import acknowledge
from memlane.adapters.aws import dynamo_schema as schema


def bedrock_model_arns(scope: Construct, model_id: str) -> list[str]:
    """What `bedrock:InvokeModel` (and Converse) must be granted on to call `model_id`: a foundation
    model id → that model in the deploying Region; a system-defined inference profile id
    (`us.amazon.nova-micro-v1:0`) → the profile in this Region and account, and the model in every
    Region the profile routes to (Bedrock picks one per request; infra/constants.py
    INFERENCE_PROFILE_DESTINATIONS); a `global.` profile's model Region-less, as AWS documents."""
    stack = Stack.of(scope)
    geography, _, model = model_id.partition(".")
    if geography not in (*c.INFERENCE_PROFILE_DESTINATIONS, c.GLOBAL_INFERENCE_PROFILE) or not model:
        return [stack.format_arn(service="bedrock", account="", resource="foundation-model", resource_name=model_id)]
    profile = stack.format_arn(service="bedrock", resource="inference-profile", resource_name=model_id)
    if geography == c.GLOBAL_INFERENCE_PROFILE:
        return [profile, f"arn:{Aws.PARTITION}:bedrock:::foundation-model/{model}"]
    return [profile, *(f"arn:{Aws.PARTITION}:bedrock:{region}::foundation-model/{model}"
                       for region in c.INFERENCE_PROFILE_DESTINATIONS[geography])]


RERANK_REASON = (
    "bedrock:Rerank supports no resource-level permissions (the Service Authorization Reference lists no "
    "resource type for it); the grant is that one action, and the only model it can reach is the reranker "
    "that bedrock:InvokeModel is granted on."
)


class ModelAccess(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, config: DeploymentConfig) -> None:
        super().__init__(scope, construct_id)
        self.provider = config.embedding_provider
        self.environment: dict[str, str] = {schema.ENV_EMBEDDER: config.embedding_provider}
        self.model_arns: list[str] = []
        self.secret: secretsmanager.ISecret | None = None
        self.rerank_model = config.rerank_model
        self.rerank_top_n = config.rerank_top_n
        self.rerank_model_arn: str | None = None
        if config.rerank_model:
            self.rerank_model_arn = Stack.of(self).format_arn(
                service="bedrock", account="", resource="foundation-model", resource_name=config.rerank_model
            )
        if self.provider == "bedrock":
            self.model_arns = bedrock_model_arns(self, config.bedrock_model_id)
            self.environment[c.ENV_BEDROCK_MODEL_ID] = config.bedrock_model_id
        else:
            self.secret = secretsmanager.Secret.from_secret_name_v2(
                self, "OpenAiApiKey", config.openai_secret_name
            )
            self.environment[schema.ENV_OPENAI_SECRET_NAME] = config.openai_secret_name

    def grant_embed(self, grantee: iam.IGrantable) -> None:
        """Embedding documents (ingestion) and queries (recall)."""
        if self.model_arns:
            iam.Grant.add_to_principal(grantee=grantee, actions=["bedrock:InvokeModel"], resource_arns=self.model_arns)
        if self.secret is not None:
            grant_secret_value(self.secret, grantee)

    def grant_summarize(self, grantee: iam.IGrantable) -> None:
        """Summaries call a model only with OpenAI (gpt-4o-mini); otherwise they are extractive."""
        if self.secret is not None:
            grant_secret_value(self.secret, grantee)

    def grant_rerank(self, function: lambda_.Function) -> None:
        """The rerank stage of recall, when the stack turns it on: the model's id in the function's
        environment (memlane.aws.compose reads it once) and the two actions a direct Rerank
        call needs, on that model's ARN only. Without `rerank_model`, nothing."""
        if self.rerank_model_arn is None:
            return
        function.add_environment(c.ENV_RERANK_MODEL_ID, self.rerank_model)
        function.add_environment(c.ENV_RERANK_TOP_N, str(self.rerank_top_n))
        iam.Grant.add_to_principal(grantee=function, actions=["bedrock:InvokeModel"],
                                   resource_arns=[self.rerank_model_arn])
        # bedrock:Rerank has no resource types in the Service Authorization Reference (cfn-lint's copy of
        # it, Policies.json, lists none): it can only be granted on '*'. The model it may reach is
        # limited by the InvokeModel grant above, which the Rerank call also needs.
        iam.Grant.add_to_principal(grantee=function, actions=["bedrock:Rerank"], resource_arns=["*"])
        acknowledge(function, "AwsSolutions-IAM5[Resource::*]", RERANK_REASON)
