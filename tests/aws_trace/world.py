"""One deployment of a synthesized template, in moto: the resources a function touches created
with deterministic names, every other resource given names and ARNs of the same shape, each
function's Lambda environment resolved from the template, and functions run the way Lambda runs
them: a cold start, exactly that environment, the function's role as the caller of every AWS call,
SQS batches delivered by an event source mapping that polls with that role, and the ingestion
workflow executed state by state (tests/functions/asl.py) by the state machine's role.

What is not AWS is replaced at its edge only: Bedrock's runtime answers from models.py (moto
answers Bedrock with empty bodies), OpenSearch is osmem-server on loopback behind the real
SigV4-signing client, and a documentation site or a connection provider is a fake the scenario
hands in.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aws_trace.environ import Read, lambda_environment
from aws_trace.knn import msearch_with_knn
from aws_trace.needs import HttpRequest, lambda_invoke
from aws_trace.recorder import Principal, Trace
from aws_trace.template import ACCOUNT, PARTITION, Resolver, Template

TESTS = Path(__file__).resolve().parents[1]
if str(TESTS / "functions") not in sys.path:  # asl.py: the state machine interpreter
    sys.path.insert(0, str(TESTS / "functions"))

from asl import Synthesized, execute  # noqa: E402

STATE_MACHINE = "StateMachine"
_HASH_SUFFIX = re.compile(r"[0-9A-F]{8}$")
# What a Lambda execution environment sets besides the function's own variables (the Python 3.12
# runtime). The credentials are moto's.
RUNTIME_VARIABLES = {
    "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_SESSION_TOKEN": "testing",
    "AWS_EXECUTION_ENV": "AWS_Lambda_python3.12", "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST",
    "AWS_LAMBDA_INITIALIZATION_TYPE": "on-demand", "AWS_LAMBDA_RUNTIME_API": "127.0.0.1:9001",
    "AWS_XRAY_CONTEXT_MISSING": "LOG_ERROR", "AWS_XRAY_DAEMON_ADDRESS": "169.254.79.129:2000",
    "_X_AMZN_TRACE_ID": "Root=1-00000000-000000000000000000000000;Parent=0000000000000000;Sampled=0",
    "LAMBDA_TASK_ROOT": "/var/task", "LAMBDA_RUNTIME_DIR": "/var/runtime", "LANG": "en_US.UTF-8", "TZ": ":UTC",
    "PATH": "/var/lang/bin:/usr/local/bin:/usr/bin/:/bin:/opt/bin", "LD_LIBRARY_PATH": "/var/lang/lib:/lib64:/usr/lib64",
    "PYTHONPATH": "/var/runtime",
}
# Set by this harness only: the X-Ray SDK stays out of the test process (a library setting; Lambda
# runs the functions with active tracing either way).
HARNESS_VARIABLES = {"POWERTOOLS_TRACE_DISABLED": "true"}


def short_name(logical_id: str) -> str:
    """The logical id without CDK's hash suffix: StorageMetadataTable45C1F2B3 → StorageMetadataTable."""
    return _HASH_SUFFIX.sub("", logical_id)


class Physical(dict[str, dict[str, str]]):
    """Attributes of every resource in the template: those the world created, and for the rest
    names and ARNs of the right shape (a reference to a logical id the template lacks fails)."""

    def __init__(self, template: Template) -> None:
        super().__init__()
        self.template = template

    def __missing__(self, logical_id: str) -> dict[str, str]:
        if logical_id not in self.template.resources:
            raise KeyError(logical_id)
        attributes = _placeholder(self.template, logical_id)
        self[logical_id] = attributes
        return attributes


class _Attributes(dict[str, str]):
    def __init__(self, logical_id: str, region: str, **known: str) -> None:
        super().__init__(known)
        self.logical_id = logical_id
        self.region = region

    def __missing__(self, name: str) -> str:
        if name == "Arn":
            return f"arn:{PARTITION}:trace:{self.region}:{ACCOUNT}:{self.logical_id}"
        return f"{self.logical_id}.{name}"


def _placeholder(template: Template, logical_id: str) -> dict[str, str]:
    kind = template.resources[logical_id]["Type"]
    props = template.props(logical_id)
    region = template.region
    name = f"{template.stack_name}-{short_name(logical_id)}"
    if kind == "AWS::IAM::Role":
        return _Attributes(logical_id, region, Ref=name, Arn=f"arn:{PARTITION}:iam::{ACCOUNT}:role/{name}",
                           RoleId=f"AROA{short_name(logical_id).upper()[:16]}")
    if kind == "AWS::Lambda::Function":
        return _Attributes(logical_id, region, Ref=name,
                           Arn=f"arn:{PARTITION}:lambda:{region}:{ACCOUNT}:function:{name}")
    if kind == "AWS::OpenSearchService::Domain":
        domain = str(props.get("DomainName", name))
        domain_arn = f"arn:{PARTITION}:es:{region}:{ACCOUNT}:domain/{domain}"
        return _Attributes(logical_id, region, Ref=domain, Arn=domain_arn, DomainArn=domain_arn,
                           DomainEndpoint=f"search-{domain}-trace.{region}.es.amazonaws.com")
    if kind == "AWS::CloudFront::Distribution":
        return _Attributes(logical_id, region, Ref="E2TRACE", DomainName="d111111abcdef8.cloudfront.net")
    if kind == "AWS::Logs::LogGroup":
        group = str(props.get("LogGroupName") or f"/aws/trace/{name}")
        return _Attributes(logical_id, region, Ref=group,
                           Arn=f"arn:{PARTITION}:logs:{region}:{ACCOUNT}:log-group:{group}:*")
    if kind == "AWS::Cognito::UserPool":
        pool = f"{region}_Trace{short_name(logical_id)[-6:]}"
        return _Attributes(logical_id, region, Ref=pool, ProviderName=f"cognito-idp.{region}.amazonaws.com/{pool}",
                           Arn=f"arn:{PARTITION}:cognito-idp:{region}:{ACCOUNT}:userpool/{pool}")
    return _Attributes(logical_id, region, Ref=name)


@dataclass
class Invocation:
    function: str  # logical id
    result: Any = None
    reads: list[Read] = field(default_factory=list)


class World:
    """The template deployed in moto. Use inside `mock_aws()`; `open()` creates the resources."""

    def __init__(self, template: Template, *, search_url: str | None = None) -> None:
        self.template = template
        self.physical = Physical(template)
        self.resolve = Resolver(template, self.physical)
        self.trace = Trace(lookup=self)
        self.search_url = search_url  # osmem-server's loopback URL, for the managed domain
        self.invocations: list[Invocation] = []
        self.fakes: dict[str, Any] = {}  # what a scenario replaces at a non-AWS edge (fetcher, ...)
        self._statements: dict[str, Any] = {}

    # ------------------------------------------------------------------ creating it

    def open(self) -> World:
        from aws_trace.provision import provision

        with self.trace.unrecorded():
            for logical_id, resource in self.template.resources.items():
                created = provision(self, logical_id, resource)
                if created is not None:
                    self.physical[logical_id] = created
        return self

    def client(self, service: str) -> Any:
        """A client for the harness's own calls (recorded only while a principal is active)."""
        import boto3

        return boto3.client(service, region_name=self.template.region)

    # ------------------------------------------------------------------ Lookup (needs.py)

    def kms_key_arn(self, key_id: str) -> str:
        if key_id.startswith("arn:"):
            return key_id
        return str(self.client("kms").describe_key(KeyId=key_id)["KeyMetadata"]["Arn"])

    def secret_arn(self, secret_id: str) -> str:
        if secret_id.startswith("arn:"):
            return secret_id
        return str(self.client("secretsmanager").describe_secret(SecretId=secret_id)["ARN"])

    def api_key_tags(self, api_key_id: str) -> dict[str, str]:
        try:
            return dict(self.client("apigateway").get_api_key(apiKey=api_key_id).get("tags") or {})
        except Exception:  # noqa: BLE001 - a key that does not exist has no tags (the call answers 404)
            return {}

    # ------------------------------------------------------------------ principals

    def statements(self, role_id: str) -> list[Any]:
        if role_id not in self._statements:
            self._statements[role_id] = self.resolve.role_statements(role_id)
        return list(self._statements[role_id])

    def principal(self, function_id: str) -> Principal:
        if function_id == STATE_MACHINE:
            (machine_id,) = self.template.of_type("AWS::StepFunctions::StateMachine")
            role = str(self.template.props(machine_id)["RoleArn"]["Fn::GetAtt"][0])
        else:
            role = self.template.role_of(function_id)
        policies = {}
        for domain_id in self.template.of_type("AWS::OpenSearchService::Domain"):
            document = self.template.props(domain_id).get("AccessPolicies", {})
            policies["opensearch"] = self.resolve.resource_policy_for(
                document, self.physical[role]["Arn"], f"{domain_id}.AccessPolicies")
        return Principal(function_id, role, self.statements(role), policies)

    # ------------------------------------------------------------------ running a function

    def lambda_environment(self, function_id: str) -> dict[str, str]:
        props = self.template.props(function_id)
        runtime = {
            **RUNTIME_VARIABLES,
            "AWS_REGION": self.template.region, "AWS_DEFAULT_REGION": self.template.region,
            "AWS_LAMBDA_FUNCTION_NAME": self.physical[function_id]["Ref"],
            "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": str(props.get("MemorySize", 128)),
            "AWS_LAMBDA_LOG_GROUP_NAME": f"/aws/lambda/{self.physical[function_id]['Ref']}",
            "AWS_LAMBDA_LOG_STREAM_NAME": "2026/11/22/[$LATEST]trace", "_HANDLER": str(props["Handler"]),
        }
        return {**runtime, **HARNESS_VARIABLES, **self.resolve.environment(function_id)}

    def invoke(self, function_id: str, event: Any, **dependencies: Any) -> Any:
        """One invocation, as Lambda would run it (a cold start each time: every composition and
        settings reader runs again under this function's environment)."""
        import importlib

        from functions.invoke import LocalLambdaContext

        props = self.template.props(function_id)
        module = importlib.import_module(str(props["Handler"]).rsplit(".", 1)[0])
        context = LocalLambdaContext(function_name=self.physical[function_id]["Ref"],
                                     memory_limit_in_mb=int(props.get("MemorySize", 128)),
                                     remaining_ms=int(props.get("Timeout", 3)) * 1000)
        invocation = Invocation(function_id)
        self.invocations.append(invocation)
        cold_start()
        with ExitStack() as stack:
            environ = stack.enter_context(lambda_environment(self.lambda_environment(function_id)))
            stack.enter_context(self.trace.acting_as(self.principal(function_id)))
            stack.enter_context(self._search_edge())
            for edge in self.fakes.values():
                stack.enter_context(edge())
            try:
                invocation.result = module.handler(event, context, **dependencies)
            finally:
                invocation.reads = list(environ.reads)
        return invocation.result

    # ------------------------------------------------------------------ SQS event sources

    def deliver(self, queue_url: str, function_id: str, *, max_batches: int = 20) -> list[Any]:
        """What an SQS event source mapping does with the function's role: poll the queue, invoke
        the function with the batch, delete the messages it did not report as failed."""
        from aws_trace.events import sqs_event

        results = []
        for _ in range(max_batches):
            with self.trace.acting_as(self.principal(function_id)):
                sqs = self.client("sqs")
                sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["VisibilityTimeout"])
                messages = sqs.receive_message(QueueUrl=queue_url, MaxNumberOfMessages=10,
                                               AttributeNames=["All"]).get("Messages", [])
            if not messages:
                break
            answer = self.invoke(function_id, sqs_event(queue_url, messages, self.template.region))
            results.append(answer)
            failed = {f["itemIdentifier"] for f in (answer or {}).get("batchItemFailures", [])}
            done = [m for m in messages if m["MessageId"] not in failed]
            if done:
                with self.trace.acting_as(self.principal(function_id)):
                    self.client("sqs").delete_message_batch(QueueUrl=queue_url, Entries=[
                        {"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(done)])
            if failed:
                break  # the rest comes back after the visibility timeout
        return results

    # ------------------------------------------------------------------ the ingestion workflow

    def state_machine(self) -> tuple[str, Synthesized]:
        """The resolved definition and, per Task state, the function it invokes (`fn:<logical id>`)
        or the SDK integration (`aws-sdk:<service>:<action>`)."""
        (machine_id,) = self.template.of_type("AWS::StepFunctions::StateMachine")
        definition = json.loads(self.resolve(self.template.props(machine_id)["DefinitionString"]))
        by_arn = {self.physical[f]["Arn"]: f for f in self.template.memlane_functions()}
        handlers = {}
        for name, state in definition["States"].items():
            if state["Type"] != "Task":
                continue
            sdk = re.search(r":states:::(aws-sdk:[\w-]+:\w+)$", state["Resource"])
            handlers[name] = sdk.group(1) if sdk else f"fn:{by_arn[state['Resource']]}"
        return self.physical[machine_id]["Ref"], Synthesized(definition=definition, handlers=handlers)

    def run_workflow(self, execution_arn: str, sdk: Callable[[str, dict[str, Any]], Any]) -> Any:
        """Executes the execution moto recorded (its name and input) through the definition: Lambda
        Tasks are invoked under the state machine's role, then run as their function; SDK Tasks go
        to `sdk(handler, payload)`, which calls AWS under the state machine's role."""
        _, synthesized = self.state_machine()
        with self.trace.unrecorded():
            described = self.client("stepfunctions").describe_execution(executionArn=execution_arn)

        def task(handler: str, payload: dict[str, Any]) -> Any:
            if handler.startswith("aws-sdk:"):
                with self.trace.acting_as(self.principal(STATE_MACHINE)):
                    return sdk(handler, payload)
            function_id = handler.removeprefix("fn:")
            with self.trace.acting_as(self.principal(STATE_MACHINE)):
                call = self.trace.record("invoke", f"lambda.Invoke {short_name(function_id)}")
                if not self.trace.check(call, lambda_invoke(self.physical[function_id]["Arn"])).allowed:
                    raise LambdaInvokeDenied(f"the state machine may not invoke {function_id}")
            return self.invoke(function_id, payload)

        return execute(synthesized, json.loads(described["input"]), described["name"], task)

    # ------------------------------------------------------------------ OpenSearch

    @contextmanager
    def _search_edge(self) -> Iterator[None]:
        """The real SigV4 client, pointed at osmem-server, every request checked by the role's
        policy and the domain's access policy (and refused with 403 like the domain would)."""
        import memlane.adapters.aws.opensearch_index as opensearch_index

        original = opensearch_index.make_opensearch_client
        domains = self.template.of_type("AWS::OpenSearchService::Domain")
        if not domains or self.search_url is None:
            yield
            return
        (domain_id,) = domains
        expected = f"https://{self.physical[domain_id]['DomainEndpoint']}"
        world = self

        def make_client(endpoint: str, region: str, kind: str = "managed", credentials: Any = None,
                        **kwargs: Any) -> Any:
            assert (endpoint, region, kind) == (expected, world.template.region, "managed"), \
                f"the function signs for {endpoint} in {region} ({kind}), not the stack's domain {expected}"
            client = original(str(world.search_url), region, kind, credentials, **kwargs)
            client.transport.perform_request = world._traced_search(client.transport.perform_request, domain_id)
            return client

        opensearch_index.make_opensearch_client = make_client
        try:
            yield
        finally:
            opensearch_index.make_opensearch_client = original

    def _traced_search(self, perform: Callable[..., Any], domain_id: str) -> Callable[..., Any]:
        from opensearchpy.exceptions import AuthorizationException

        domain_arn = self.physical[domain_id]["Arn"]

        def traced(method: str, url: str, params: Any = None, body: Any = None, **kwargs: Any) -> Any:
            path = url.split("?", 1)[0]
            if self.trace.principal is not None:
                request = HttpRequest(method.upper(), path, domain_arn)
                call = self.trace.record("opensearch", f"{request.method} {request.path}")
                checked = self.trace.check(call, request.need(), resource_policy="opensearch")
                if not checked.allowed:
                    raise AuthorizationException(403, "security_exception", {"error": checked.need.describe()})
            if method.upper() == "POST" and path.endswith("/_msearch"):
                return msearch_with_knn(perform, method, url, body, params=params, **kwargs)
            return perform(method, url, params=params, body=body, **kwargs)

        return traced


class LambdaInvokeDenied(Exception):
    sfn_error = "Lambda.AWSLambdaException"


def cold_start() -> None:
    """What a new execution environment starts without: every module-level `Lazy` composition of
    memlane and of the handlers, and Powertools' cached parameter providers."""
    from aws_lambda_powertools.utilities.parameters import base

    from memlane.lazy import Lazy

    for name, module in list(sys.modules.items()):
        if module is None or not (name == "functions" or name.startswith(("functions.", "memlane."))):
            continue
        for value in list(vars(module).values()):
            if isinstance(value, Lazy):
                value.reset()
    base.DEFAULT_PROVIDERS.clear()
