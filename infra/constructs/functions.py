"""The shared Lambda factory: one code asset, one dependency layer, the same runtime settings.

Every function gets its own role (no AWS managed policies), its own log group with a retention,
active X-Ray tracing and the Powertools settings. Capabilities add only the grants their function
needs, through the resources' grant helpers in the other constructs.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from constructs import Construct

from infra import constants as c
from infra.config import DeploymentConfig
from infra.nag import acknowledge

RUNTIME = lambda_.Runtime.PYTHON_3_12
_ARCHITECTURES = {"arm64": lambda_.Architecture.ARM_64, "x86_64": lambda_.Architecture.X86_64}

XRAY_REASON = (
    "Active tracing adds xray:PutTraceSegments and xray:PutTelemetryRecords; X-Ray does not support "
    "resource-level permissions for these actions, so the resource must be '*'."
)
RUNTIME_REASON = (
    f"Pinned to Python {c.LAMBDA_PYTHON_VERSION}: the dependency layer holds compiled wheels (numpy, "
    "pydantic-core) built for exactly this CPython ABI by layers/build.py; runtime and layer move together."
)


def function_role(function: lambda_.IFunction) -> iam.IRole:
    """The execution role FunctionFactory.create gave `function` (typed `IRole | None` by CDK,
    since an imported function may have none; memlane's always have one)."""
    role = function.role
    if role is None:
        raise ValueError(f"{function.node.path} has no execution role")
    return role


class FunctionFactory(Construct):
    """Creates memlane's functions and remembers them (observability alarms on every one)."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: DeploymentConfig,
        code_dir: Path,
        layer_dir: Path,
        environment: Mapping[str, str],
    ) -> None:
        super().__init__(scope, construct_id)
        self._config = config
        self.architecture = _ARCHITECTURES[config.lambda_architecture]
        self.code = lambda_.Code.from_asset(str(code_dir))
        self.layer = lambda_.LayerVersion(
            self,
            "DependencyLayer",
            code=lambda_.Code.from_asset(str(layer_dir)),
            compatible_runtimes=[RUNTIME],
            compatible_architectures=[self.architecture],
            description=f"memlane dependencies ({c.LAYER_NAME}, {config.lambda_architecture}, "
            f"Python {c.LAMBDA_PYTHON_VERSION})",
        )
        self.environment: dict[str, str] = {
            c.ENV_POWERTOOLS_METRICS_NAMESPACE: c.METRICS_NAMESPACE,
            c.ENV_LOG_LEVEL: config.log_level,
            c.ENV_STAGE: config.stage,
            **environment,
        }
        self.functions: list[lambda_.Function] = []

    def add_environment(self, name: str, value: str) -> None:
        """A setting every function reads; applied to the functions already created too."""
        self.environment[name] = value
        for function in self.functions:
            function.add_environment(name, value)

    def create(
        self,
        scope: Construct,
        spec: c.FunctionSpec,
        *,
        environment: Mapping[str, str] | None = None,
    ) -> lambda_.Function:
        role = iam.Role(
            scope,
            f"{spec.construct_id}Role",
            assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
            description=f"memlane {spec.handler}: only the grants this function needs",
        )
        log_group = logs.LogGroup(
            scope,
            f"{spec.construct_id}Logs",
            retention=retention_days(self._config.log_retention_days),
            removal_policy=log_removal_policy(self._config),
        )
        function = lambda_.Function(
            scope,
            spec.construct_id,
            description=spec.description,
            runtime=RUNTIME,
            architecture=self.architecture,
            handler=spec.handler,
            code=self.code,
            layers=[self.layer],
            memory_size=spec.memory_mb,
            timeout=Duration.seconds(spec.timeout_s),
            role=role,
            log_group=log_group,
            tracing=lambda_.Tracing.ACTIVE,
            environment={
                **self.environment,
                c.ENV_POWERTOOLS_SERVICE_NAME: c.SERVICE_NAME,
                c.ENV_XRAY_SDK: "true" if self._xray_sdk(spec) else "false",
                **(environment or {}),
            },
        )
        # The log group exists before the function, so the role only needs to write into it.
        role.add_to_principal_policy(
            iam.PolicyStatement(
                actions=["logs:CreateLogStream", "logs:PutLogEvents"],
                resources=[log_group.log_group_arn],
            )
        )
        acknowledge(role, "AwsSolutions-IAM5[Resource::*]", XRAY_REASON)
        acknowledge(function, "AwsSolutions-L1", RUNTIME_REASON)
        self.functions.append(function)
        return function

    def _xray_sdk(self, spec: c.FunctionSpec) -> bool:
        """Powertools' Tracer (X-Ray SDK subsegments) costs ~250 ms of cold start: kept off the
        request path unless asked for; Lambda's active tracing records every invocation anyway."""
        return not spec.request_path or self._config.xray_sdk_on_request_path


_RETENTION = {
    1: logs.RetentionDays.ONE_DAY,
    3: logs.RetentionDays.THREE_DAYS,
    5: logs.RetentionDays.FIVE_DAYS,
    7: logs.RetentionDays.ONE_WEEK,
    14: logs.RetentionDays.TWO_WEEKS,
    30: logs.RetentionDays.ONE_MONTH,
    60: logs.RetentionDays.TWO_MONTHS,
    90: logs.RetentionDays.THREE_MONTHS,
    120: logs.RetentionDays.FOUR_MONTHS,
    150: logs.RetentionDays.FIVE_MONTHS,
    180: logs.RetentionDays.SIX_MONTHS,
    365: logs.RetentionDays.ONE_YEAR,
    400: logs.RetentionDays.THIRTEEN_MONTHS,
    545: logs.RetentionDays.EIGHTEEN_MONTHS,
    731: logs.RetentionDays.TWO_YEARS,
    1096: logs.RetentionDays.THREE_YEARS,
    1827: logs.RetentionDays.FIVE_YEARS,
    2192: logs.RetentionDays.SIX_YEARS,
    2557: logs.RetentionDays.SEVEN_YEARS,
    2922: logs.RetentionDays.EIGHT_YEARS,
    3288: logs.RetentionDays.NINE_YEARS,
    3653: logs.RetentionDays.TEN_YEARS,
}


def retention_days(days: int) -> logs.RetentionDays:
    return _RETENTION[days]


def log_removal_policy(config: DeploymentConfig) -> RemovalPolicy:
    """Logs follow the data: kept when the stage keeps its data, deleted with a dev stack."""
    return RemovalPolicy.RETAIN if config.retain_data else RemovalPolicy.DESTROY
