"""The paths memlane's functions take once deployed, run in a World (tests/aws_trace) for the
permission trace and the environment test: every function, and on each the paths that reach a
different AWS resource. What each scenario leaves behind is kept in `Outcomes`, so the tests also
check that the path did what a user expects (a call that was refused shows there too).

Order matters as on AWS: a key is created by the keys function and checked by the authorizer,
whose answer is the API's request context; saves queue work that the event sources deliver.
"""

from __future__ import annotations

import base64
import json
import socket
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from functools import partial
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
from aws_trace.events import api_event, authorizer_event, load
from aws_trace.models import FakeBedrock
from aws_trace.vectors import VectorEdge
from aws_trace.world import STATE_MACHINE, World
from media_samples import blank_image, wav

from infra import constants as c
from memlane.ports import FetchResult

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration" / "connections"))
from fake_github import FakeGitHub  # noqa: E402
from fake_provider import CLIENT_ID, CLIENT_SECRET  # noqa: E402

REPO = "acme/ops"
LARGE_CHARS = 150_000  # over the 100 KB a document keeps in DynamoDB: its content lives in S3
SITE = {
    "https://docs.example.com/guide/": (
        "<html><head><title>Guide</title></head><body><main><h1>Guide</h1><p>Widgets turn sprockets "
        "into gears with very little friction.</p><a href='/guide/install'>Install</a></main></body></html>"),
    "https://docs.example.com/guide/install": (
        "<html><head><title>Install</title></head><body><main><h1>Install</h1><p>Install the widget "
        "with pip install widget, then run widget init.</p></main></body></html>"),
}
# What the trace's Textract reads on every page (moto's DetectDocumentText answers these blocks).
OCR_LINES = ("Invoice 2291 from Northwind Traders", "Total due: 418 euros by December 12")


def llm_answers() -> dict[str, Callable[[dict[str, Any]], dict[str, Any]]]:
    return {"extract_facts": lambda body: {"facts": [
                {"text": "Maya keeps bees on her roof", "subject": "Maya", "sources": [1]}]},
            "reconcile_fact": lambda body: {"outcome": "new", "reason": "nothing known"}}


class SiteFetcher:
    def __init__(self) -> None:
        self.fetched: list[str] = []

    def fetch(self, url: str, *, etag: str | None = None, last_modified: str | None = None) -> FetchResult:
        self.fetched.append(url)
        body = SITE.get(url)
        if body is None:
            return FetchResult(url, 404, b"", None, None, None)
        return FetchResult(url, 200, body.encode(), "text/html; charset=utf-8", None, None)


def public_dns(host: str, port: int, *args: object, **kwargs: object) -> list[tuple]:
    """The crawler's SSRF check resolves docs.example.com to a public address."""
    return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.215.14", port))]


def large_text() -> str:
    paragraph = ("The quarterly capacity review covers the ingestion fleet, the recall latency budget and "
                 "the storage growth of every tenant; each section lists the owner and the next step. ")
    return "\n\n".join(f"## Section {i}\n\n{paragraph * 3}" for i in range(LARGE_CHARS // 600 + 1))[:LARGE_CHARS]


class ResponseSink:
    """CloudFormation's pre-signed response URL for a custom resource, on 127.0.0.1."""

    def __init__(self) -> None:
        import threading

        self.answers: list[dict[str, Any]] = []
        sink = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the stdlib's name
                return

            def do_PUT(self) -> None:  # noqa: N802 - the stdlib's name
                sink.answers.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
                self.send_response(200)
                self.end_headers()

        self.server = HTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_port}/cloudformation-response"

    def close(self) -> None:
        self.server.shutdown()


@dataclass
class Outcomes:
    """What the scenarios observed (the tests assert on it)."""

    key: str = ""
    authorizer: dict[str, Any] = field(default_factory=dict)
    responses: dict[str, dict[str, Any]] = field(default_factory=dict)
    documents: dict[str, str] = field(default_factory=dict)  # scenario name -> document id
    runs: dict[str, Any] = field(default_factory=dict)  # workflow runs by document name
    callback_location: str = ""
    neighbour_context_before: str = ""
    neighbour_context_after: str = ""
    # the message before one replaced by a new version: its index entry before and after the workflow
    replaced_neighbour_before: str = ""
    replaced_neighbour_after: str = ""
    facts: int = 0
    statuses: dict[str, tuple[str, str | None]] = field(default_factory=dict)  # after the workflow
    scan_text: str = ""


class Scenarios:
    def __init__(self, world: World, *, stage: str) -> None:
        self.world = world
        self.stage = stage
        self.out = Outcomes()
        self.github = FakeGitHub().start()
        self.github.repo(REPO).files.update({"README.md": b"# Ops\n\nPager rotation starts Mondays.\n"})
        self.github.add_issue(REPO, 1, "Pager fatigue", "Too many night pages.")
        self.site = SiteFetcher()
        self.bedrock = FakeBedrock(llm_answers())
        # S3 Vectors (searchBackend=s3vectors): moto plus the fake QueryVectors, and CloudFormation's
        # response URL for the vector bucket's custom resource
        vectors = world.template.of_type("AWS::S3Vectors::VectorBucket")
        self.vectors = VectorEdge(world.template.region) if vectors else None
        self.cloudformation = ResponseSink() if vectors else None

    def close(self) -> None:
        self.github.stop()
        if self.cloudformation is not None:
            self.cloudformation.close()

    # ------------------------------------------------------------------ helpers

    def fn(self, construct_id: str) -> str:
        """A function's logical id from its FunctionSpec construct id."""
        spec = next(s for s in c.ALL_FUNCTIONS if s.construct_id == construct_id)
        return self.world.template.function_by_handler(spec.handler)

    def queue_url(self, name: str) -> str:
        (queue_id,) = [k for k in self.world.template.of_type("AWS::SQS::Queue")
                       if name in k and "Dlq" not in k]
        return str(self.world.physical[queue_id]["Ref"])

    def api(self, name: str, method: str, path: str, body: Any = None, *, public: bool = False,
            query: dict[str, str] | None = None, status: int | None = None) -> dict[str, Any]:
        event = api_event(method, path, authorizer=None if public else self.out.authorizer, body=body,
                          query=query, stage=self.stage)
        response = self.world.invoke(self.fn("ApiFunction"), event)
        headers = {k: v[-1] for k, v in (response.get("multiValueHeaders") or {}).items() if v}
        parsed = {"status": response["statusCode"], "headers": {**headers, **(response.get("headers") or {})},
                  "body": json.loads(response["body"]) if response.get("body") else None}
        self.out.responses[name] = parsed
        if status is not None:
            assert parsed["status"] == status, (name, parsed)
        return parsed

    @contextmanager
    def edges(self) -> Iterator[None]:
        """What is not AWS, replaced at its edge for every function run."""
        import memlane.aws.compose as compose
        import memlane.docsets.service as docset_service

        @contextmanager
        def fetcher() -> Iterator[None]:
            original, check = compose.build_fetcher, docset_service.check_url
            compose.build_fetcher = lambda settings: self.site
            docset_service.check_url = partial(check, resolver=public_dns)
            try:
                yield
            finally:
                compose.build_fetcher, docset_service.check_url = original, check

        self.world.fakes["fetcher"] = fetcher
        with self.bedrock.serving(self.world.trace), \
                (self.vectors.serving(self.world.trace) if self.vectors else nullcontext()):
            yield

    def setup_world(self) -> None:
        """What the operator creates besides the stack (docs/deploy.md): the connection providers'
        OAuth clients in Secrets Manager; and the page Textract reads."""
        from moto.textract.models import TextractBackend

        with self.world.trace.unrecorded():
            self.world.client("secretsmanager").create_secret(
                Name=c.DEFAULT_CONNECTIONS_SECRET_NAME, SecretString=json.dumps({"github": {
                    "client_id": CLIENT_ID, "client_secret": CLIENT_SECRET,
                    "authorize_url": f"{self.github.url}/oauth/authorize", "token_url": f"{self.github.url}/oauth/token",
                    "api_url": self.github.url}}))
        TextractBackend.BLOCKS = [{"BlockType": "LINE", "Text": line, "Confidence": 99.0, "Id": str(i)}
                                  for i, line in enumerate(OCR_LINES)]
        TextractBackend.PAGES = 1

    # ------------------------------------------------------------------ the scenarios, in order

    def run(self) -> Outcomes:
        self.setup_world()
        self.vector_bucket("Create")
        self.keys_and_authorizer()
        self.saves_and_recall()
        self.conversation_and_extraction()
        self.ingestion_workflow()
        self.forget_a_conversation_message()
        self.keys_through_the_api()
        self.connection_flow_and_sync()
        self.docset_crawl_and_refresh()
        self.delete_a_document()
        self.vector_bucket("Delete")
        return self.out

    def vector_bucket(self, kind: str) -> None:
        """The S3 Vectors bucket's custom resource as CloudFormation drives it: Create makes the bucket's
        default index mode ENHANCED, Delete (a dev stack) deletes the indexes so the bucket can go."""
        if self.cloudformation is None:
            return
        world = self.world
        function = world.template.function_by_handler(c.VECTOR_BUCKET_FUNCTION.handler)
        ((resource_id, resource),) = world.template.of_type("Custom::MemlaneVectorBucket").items()
        props = world.resolve(resource["Properties"])
        world.invoke(function, {"RequestType": kind, "ResponseURL": self.cloudformation.url,
                                "StackId": f"arn:aws:cloudformation:{world.template.region}:123456789012:stack/trace/1",
                                "RequestId": f"trace-{kind}", "LogicalResourceId": resource_id,
                                "ResourceType": resource["Type"], "ResourceProperties": props,
                                **({"PhysicalResourceId": props["VectorBucketName"]} if kind != "Create" else {})})
        answer = self.cloudformation.answers[-1]
        assert answer["Status"] == "SUCCESS", answer

    def keys_and_authorizer(self) -> None:
        world = self.world
        created = world.invoke(self.fn("KeysFunction"), load("admin_keys_create.json"))
        assert "error" not in created, created
        self.out.key = created["secret"]
        second = world.invoke(self.fn("KeysFunction"), load("admin_keys_create.json"))
        listed = world.invoke(self.fn("KeysFunction"), {"action": "list"})
        assert len(listed["keys"]) == 2, listed
        listed = world.invoke(self.fn("KeysFunction"), {"action": "list", "org": "default"})
        assert len(listed["keys"]) == 2, listed
        revoked = world.invoke(self.fn("KeysFunction"), {"action": "revoke", "key_id": second["key"]["id"]})
        assert "error" not in revoked, revoked
        (api_id,) = [world.physical[k]["Ref"] for k in world.template.of_type("AWS::ApiGateway::RestApi")]
        answer = world.invoke(self.fn("AuthorizerFunction"),
                              authorizer_event(self.out.key, "POST", "/v3/memory", api_id, self.stage,
                                               world.template.region))
        assert answer["policyDocument"]["Statement"][0]["Effect"] == "Allow", answer
        self.out.authorizer = dict(answer["context"])

    def saves_and_recall(self) -> None:
        small = self.api("save-small", "POST", "/v3/memory", {
            "content": "Our cat Miso needs her thyroid pill every morning with food.", "title": "Miso meds"},
            status=201)
        self.out.documents["small"] = small["body"]["id"]
        large = self.api("save-large", "POST", "/v3/memory", {"content": large_text(), "title": "Capacity review"},
                         status=202)
        self.out.documents["large"] = large["body"]["id"]
        image = self.api("save-image", "POST", "/v3/memory", {
            "content": base64.b64encode(blank_image()).decode(), "content_type": "image", "title": "Invoice scan"})
        assert image["status"] in (201, 202), image
        self.out.documents["image"] = image["body"]["id"]
        scan = self.api("save-scan", "POST", "/v3/memory", {
            "content": base64.b64encode(blank_image(pages=6)).decode(), "content_type": "image", "title": "Long scan"},
            status=202)
        self.out.documents["scan"] = scan["body"]["id"]
        # a scan whose original is lost before the workflow reads it: Extract fails, MarkFailed records why
        broken = self.api("save-broken-scan", "POST", "/v3/memory", {
            "content": base64.b64encode(blank_image(pages=5)).decode(), "content_type": "image", "title": "Lost scan"},
            status=202)
        self.out.documents["broken-scan"] = broken["body"]["id"]
        with self.world.trace.unrecorded():
            bucket = self.world.resolve.environment(self.fn("ApiFunction"))["MEMLANE_BUCKET"]
            key = f"media/{self.out.authorizer['organization_id']}/{broken['body']['id']}"
            s3 = self.world.client("s3")
            for version in s3.list_object_versions(Bucket=bucket, Prefix=key).get("Versions", []):
                s3.delete_object(Bucket=bucket, Key=key, VersionId=version["VersionId"])
        recording = self.api("save-recording", "POST", "/v3/memory", {
            "content": base64.b64encode(wav()).decode(), "content_type": "audio", "title": "Standup"}, status=202)
        self.out.documents["recording"] = recording["body"]["id"]
        self.api("recall", "POST", "/v3/recall", {"query": "when does Miso take her pill", "limit": 5}, status=200)
        self.api("stats", "GET", "/v3/stats", status=200)

    def conversation_and_extraction(self) -> None:
        saved = self.api("conversation", "POST", "/v3/conversations", {
            "conversation_id": "kitchen", "messages": [
                {"speaker": "Maya", "content": "I keep bees on my roof, three hives since spring."},
                {"speaker": "Sam", "content": "Do the neighbours mind the bees?"},
                {"speaker": "Maya", "content": "They like the honey jars I leave on their doorstep."}]}, status=201)
        self.out.documents.update({f"message-{i}": m["id"] for i, m in enumerate(saved["body"]["messages"])})
        # a new version of a message, over the inline limit: queued and written by the workflow,
        # whose Write step then indexes the message after it again (it carried the old version)
        standup = self.api("conversation-standup", "POST", "/v3/conversations", {
            "conversation_id": "standup", "extract": False, "messages": [
                {"speaker": "Lee", "content": "Morning, the build is green again."},
                {"speaker": "Ana", "content": "Release notes are in the wiki."},
                {"speaker": "Lee", "content": "Thanks, I will read them after lunch."}]}, status=201)
        self.out.documents.update({f"standup-{i}": m["id"] for i, m in enumerate(standup["body"]["messages"])})
        notes = self.api("message-new-version", "POST", "/v3/memory", {
            "updates_memory_id": self.out.documents["standup-1"],
            "content": "Release notes: " + "the payments service moved to the new queue; retries now back off "
                       "exponentially and the dashboard shows every stage. " * 200}, status=202)
        self.out.documents["standup-1-v2"] = notes["body"]["id"]
        self.out.replaced_neighbour_before = self.indexed_context(self.out.documents["standup-0"])
        if saved["body"]["extraction"]["status"] == "queued":
            self.world.deliver(self.queue_url("ExtractionQueue"), self.fn("ExtractionConsumerFunction"))
            extraction = self.api("extraction", "GET", f"/v3/extractions/{saved['body']['extraction']['id']}",
                                  status=200)
            self.out.facts = len(extraction["body"]["facts"])

    def ingestion_workflow(self) -> None:
        """The ingest queue's consumer starts one execution per queued document; each runs through
        the synthesized definition (Transcribe answered by moto, whose job writes its transcript)."""
        world = self.world
        world.deliver(self.queue_url("IngestQueue"), self.fn("IngestConsumerFunction"))
        machine_arn, _ = world.state_machine()
        with world.trace.unrecorded():
            executions = world.client("stepfunctions").list_executions(stateMachineArn=machine_arn)["executions"]
        by_document = {v: k for k, v in self.out.documents.items()}
        for execution in executions:
            with world.trace.unrecorded():
                described = world.client("stepfunctions").describe_execution(executionArn=execution["executionArn"])
            name = by_document.get(json.loads(described["input"])["document_id"], execution["name"])
            self.out.runs[name] = world.run_workflow(execution["executionArn"], self.transcribe)
            document = self.document(name)
            self.out.statuses[name] = (str(document.status), document.status_reason) if document else ("gone", None)
        self.out.replaced_neighbour_after = self.indexed_context(self.out.documents["standup-0"])
        scan = self.document("scan")
        self.out.scan_text = scan.content if scan is not None else ""

    def document(self, name: str) -> Any:
        """A document as the metadata store holds it (read by the harness, unrecorded)."""
        from memlane.adapters.aws.blob_store import S3BlobStore
        from memlane.adapters.aws.metadata_store import DynamoMetadataStore

        env = self.world.resolve.environment(self.fn("ApiFunction"))
        with self.world.trace.unrecorded():
            blobs = S3BlobStore(env["MEMLANE_BUCKET"], client=self.world.client("s3"))
            store = DynamoMetadataStore(env["MEMLANE_TABLE"], client=self.world.client("dynamodb"), blob_store=blobs)
            return store.get_document(self.out.authorizer["organization_id"], self.out.documents[name])

    def transcribe(self, handler: str, payload: dict[str, Any]) -> Any:
        """The state machine's Transcribe tasks, called with its role; the job writes its output
        where it was asked (Transcribe itself does, with the caller's permissions: checked above)."""
        from botocore.exceptions import ClientError

        client = self.world.client("transcribe")
        action = handler.rsplit(":", 1)[1]
        try:
            if action == "startTranscriptionJob":
                response = client.start_transcription_job(**payload)
                with self.world.trace.unrecorded():
                    self.world.client("s3").put_object(
                        Bucket=payload["OutputBucketName"], Key=payload["OutputKey"], Body=json.dumps({
                            "jobName": payload["TranscriptionJobName"], "status": "COMPLETED", "results": {
                                "language_code": "en-US", "items": [],
                                "transcripts": [{"transcript": "The release train leaves on Tuesday."}],
                                "audio_segments": [{"id": 0, "transcript": "The release train leaves on Tuesday.",
                                                    "start_time": "0.2", "end_time": "2.9", "items": []}]}}).encode())
                return json.loads(json.dumps(response, default=str))
            return json.loads(json.dumps(client.get_transcription_job(**payload), default=str))
        except ClientError as exc:
            error = RuntimeError(str(exc))
            error.sfn_error = f"Transcribe.{exc.response['Error']['Code']}"  # type: ignore[attr-defined]
            raise error from exc

    def forget_a_conversation_message(self) -> None:
        """A message expires and the hourly job forgets it: its neighbour is indexed again without
        its words. Another message is deleted through the API, the same removal path."""
        from memlane.adapters.aws.metadata_store import DynamoMetadataStore

        world = self.world
        (table_id,) = world.template.of_type("AWS::DynamoDB::Table")
        org = self.out.authorizer["organization_id"]
        first, second = self.out.documents["message-0"], self.out.documents["message-1"]
        self.out.neighbour_context_before = self.indexed_context(second)
        with world.trace.unrecorded():
            store = DynamoMetadataStore(world.physical[table_id]["Ref"], client=world.client("dynamodb"))
            doc = store.get_document(org, first)
            assert doc is not None
            from datetime import UTC, datetime

            store.put_document(doc.model_copy(update={"forget_after": datetime(2020, 1, 1, tzinfo=UTC)}))
        world.invoke(self.fn("ForgetFunction"), load("forget_job_schedule.json"))
        self.out.neighbour_context_after = self.indexed_context(second)
        self.api("delete-message", "DELETE", f"/v3/documents/{self.out.documents['message-2']}", status=200)

    def indexed_context(self, document_id: str) -> str:
        """The `context` field the search index holds for a document's chunks (osmem or the vector
        bucket, unrecorded)."""
        from opensearchpy import OpenSearch

        if self.vectors is not None:
            bucket = self.world.resolve.environment(self.fn("ApiFunction"))["MEMLANE_VECTOR_BUCKET"]
            with self.world.trace.unrecorded():
                return self.vectors.indexed_context(bucket, document_id)

        client = OpenSearch(hosts=[str(self.world.search_url)])
        hits = client.search(index=c.SEARCH_INDEX_ALIAS, body={
            "query": {"term": {"document_id": document_id}}, "_source": ["context"]})["hits"]["hits"]
        return " ".join(str(h["_source"].get("context", "")) for h in hits)

    def keys_through_the_api(self) -> None:
        created = self.api("key-create", "POST", "/v3/keys", {"name": "web"}, status=201)
        self.api("key-revoke", "DELETE", f"/v3/keys/{created['body']['key']['id']}", status=200)

    def connection_flow_and_sync(self) -> None:
        """Connecting GitHub: the API starts the flow, the provider sends the browser back to the
        API's callback, which sends it on to the web app's confirmation page; the member confirms
        there; the schedule and the sync function take it from there."""
        world = self.world
        started = self.api("connect", "POST", "/v3/connections",
                           {"provider": "github", "options": {"repositories": [REPO]}}, status=201)
        location = urlsplit(httpx.get(started["body"]["authorization_url"], follow_redirects=False).headers["Location"])
        back = {k: v[0] for k, v in parse_qs(location.query).items()}
        callback = self.api("callback", "GET", "/oauth/callback", public=True, query=back, status=302)
        self.out.callback_location = callback["headers"]["Location"]
        flow = parse_qs(urlsplit(self.out.callback_location).query)["flow"][0]
        self.api("confirm", "POST", "/v3/connections/confirm", {"flow": flow}, status=200)
        world.deliver(self.queue_url("SyncQueue"), self.fn("ConnectionSyncFunction"))
        world.invoke(self.fn("ConnectionScheduleFunction"), load("connection_schedule.json"))

    def docset_crawl_and_refresh(self) -> None:
        world = self.world
        self.api("docset", "POST", "/index", {"baseUrl": "https://docs.example.com", "seedSlug": "/guide/",
                                              "name": "Widgets"}, status=200)
        world.deliver(self.queue_url("PageQueue"), self.fn("PageWorkerFunction"))
        world.invoke(self.fn("RefreshFunction"), {**load("refresh_job_schedule.json"), "force": True})
        world.deliver(self.queue_url("PageQueue"), self.fn("PageWorkerFunction"))

    def delete_a_document(self) -> None:
        self.api("delete-large", "DELETE", f"/v3/documents/{self.out.documents['large']}", status=200)


def principals(world: World) -> list[Any]:
    """Every principal whose grants the trace accounts for: each memlane function and the state machine."""
    return [world.principal(f) for f in world.template.memlane_functions()] + [world.principal(STATE_MACHINE)]


def run_scenarios(template_json: dict[str, Any], stack: Any) -> tuple[World, Outcomes]:
    """Deploy a synthesized template in moto (with osmem-server for its search domain), run every
    scenario, and hand back the world (its trace and reads) and what the scenarios observed."""
    import pytest
    from aws_trace.template import Template
    from moto import mock_aws

    osmem_server = pytest.importorskip("osmem_server", reason="osmem-server is not installed: no local OpenSearch")
    template = Template(template_json, stack.stack_name, region=stack.config.region or "us-east-1")
    server = osmem_server.OsmemServer.start(japanese=False)
    monkeypatch = pytest.MonkeyPatch()
    for name, value in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                        "AWS_SESSION_TOKEN": "testing", "AWS_DEFAULT_REGION": template.region}.items():
        monkeypatch.setenv(name, value)
    try:
        with mock_aws():
            world = World(template, search_url=server.url)
            scenarios = Scenarios(world, stage=stack.config.stage)
            try:
                with world.trace.hooked(), scenarios.edges():
                    world.open()
                    outcomes = scenarios.run()
            finally:
                scenarios.close()
    finally:
        monkeypatch.undo()
        server.close()
    return world, outcomes
