"""`memlane check --url <API> --key <key>`: after `cdk deploy` (or against `make run`'s server), try
the deployed recall end to end and print one line per check: PASS, FAIL or SKIP with what was seen.
Exit code 0 when nothing failed, 1 when a check failed, 2 when the API cannot be reached at all.

Everything happens in a fresh project named memlane-check-<random>, deleted at the end (also
after a failure). The checks:

    connect       the key is accepted (GET /v3/whoami)
    search        which search index answers (GET /health names it: the embedded one, OpenSearch or
                  Amazon S3 Vectors) and what the checks below exercise there
    save          four memories and, where the server has the conversation signal, a conversation
    ready         every save is ready (polled until --timeout)
    vector        a paraphrase sharing no word with its memory finds it first (only embeddings can)
    keyword       a made-up token found in one memory only finds it first (only BM25 can: no
                  embedding model knows the token)
    conversation  an answer that never names the topic is recalled with the question saved just
                  before it in the same conversation (the conversation stages); skipped when the
                  server's MemoryIn has no `conversation_id`
    floor         a nonsense query returns nothing; skipped when the answer has no `floor`
    rerank        the optional rerank stage (AWS): reported when the answer has `rerank`
    receipt       a memory is deleted and its deletion receipt read back verified
    cleanup       the project and everything in it deleted
"""

from __future__ import annotations

import argparse
import secrets
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from memlane_client import MemlaneClient, MemlaneError, MemlaneUnreachable

from memlane.config.client import ENV_API_KEY, ENV_API_URL

DEFAULT_TIMEOUT_S = 120.0
POLL_S = 0.5
RECALL_LIMIT = 5

# The paraphrase shares no word (nor a stem) with its memory: only the vector leg can match them.
PARAPHRASE_MEMORY = "Our physician prescribed antibiotics because my daughter's ear infection worsened overnight."
PARAPHRASE_QUERY = "doctor gave medicine to a kid with an earache"
# Unrelated memories, so that "first" means something.
DISTRACTORS = (
    "The quarterly budget review moved to Thursday afternoon in the large meeting room.",
    "Tomatoes need six hours of direct sunlight each day and deep watering twice a week.",
)
# The conversation: the answer never names the ferry; the question saved just before it does.
CONVERSATION = (
    "When does the ferry to Lindholm island leave tomorrow morning?",
    "Nine sharp, from pier four; be there twenty minutes early.",
)
CONVERSATION_QUERY = "ferry to Lindholm island"
# What `vector`, `keyword` and `receipt` exercise on each search index GET /health may name, and where
# to look when `vector` or `keyword` fails there.
SEARCH_BACKENDS: dict[str, tuple[str, str, str, str, str]] = {
    "embedded": ("the embedded index of this server (SQLite)", "its k-NN over the stored vectors",
                 "its BM25 over the searched scope", "the index's rows of the memory",
                 "the server's embedder and `memlane reindex`"),
    "opensearch": ("OpenSearch (managed domain), one index for every organization", "a k-NN query (faiss)",
                   "a BM25 query (english analyzer)", "the documents counted in the index",
                   "the domain's index has vectors (the embedder's grant and model id) and the functions' "
                   "es:ESHttp* grants"),
    "opensearch-serverless": ("OpenSearch Serverless, one index for every organization", "a k-NN query",
                              "a BM25 query (english analyzer)", "the documents counted in the index",
                              "the collection's data access policy names the function roles"),
    "s3vectors": ("Amazon S3 Vectors, an index per organization", "QueryVectors with the query vector",
                  "QueryVectors with queryTexts (full-text search)", "GetVectors of the memory's keys",
                  "the organization's index is ENHANCED with the text keys text, title, headings, context "
                  "(aws s3vectors get-index) and the function roles may call s3vectors:QueryVectors and "
                  "s3vectors:GetVectors"),
}
# Names a server might give the conversation's explicit order (issue 22 leaves the name to its
# implementer): a sequence number, or the time the message was said.
ORDER_FIELDS = ("sequence", "seq", "turn", "turn_index", "position", "message_index")
TIME_FIELDS = ("message_time", "sent_at", "said_at", "occurred_at", "message_at", "timestamp")


@dataclass
class Outcome:
    name: str
    status: str  # PASS | FAIL | SKIP
    seen: str


@dataclass
class Run:
    client: MemlaneClient
    timeout: float
    out: Callable[[str], None]
    outcomes: list[Outcome] = field(default_factory=list)
    backend: str | None = None  # the search index GET /health names
    project_id: str | None = None
    saved: dict[str, str] = field(default_factory=dict)  # role → document id

    def report(self, name: str, status: str, seen: str) -> Outcome:
        outcome = Outcome(name, status, seen)
        self.outcomes.append(outcome)
        self.out(f"{status:<4}  {name:<12}  {seen}")
        return outcome

    @property
    def failed(self) -> bool:
        return any(o.status == "FAIL" for o in self.outcomes)


def add_parsers(sub: argparse._SubParsersAction) -> None:
    c = sub.add_parser(
        "check",
        help="try a deployed API end to end (save, wait, recall by meaning and by keyword, floor, "
        "deletion receipt, clean-up) and print PASS/FAIL/SKIP per check",
    )
    c.add_argument("--url", help=f"the API's base URL (default ${ENV_API_URL}), e.g. the stack's ApiUrl output")
    c.add_argument("--key", help=f"an API key of the deployment (default ${ENV_API_KEY})")
    c.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S,
                   help=f"seconds to wait for the saves to be ready (default {DEFAULT_TIMEOUT_S:g})")
    c.set_defaults(func=cmd_check)


def cmd_check(args: argparse.Namespace) -> int:
    client = args.configuration.client
    url = args.url or client.api_url
    if not url:
        print(f"memlane check: give --url (or set {ENV_API_URL})", file=sys.stderr)
        return 2
    if args.timeout <= 0:
        print("memlane check: --timeout must be a positive number of seconds", file=sys.stderr)
        return 2
    key = args.key or client.api_key
    with MemlaneClient(url, key, timeout=60.0) as client:
        try:
            run = check(client, args.timeout, print)
        except MemlaneUnreachable as exc:
            print(f"memlane check: {exc.error}", file=sys.stderr)
            return 2
    return 1 if run.failed else 0


def check(client: MemlaneClient, timeout: float, out: Callable[[str], None]) -> Run:
    """Every check, in order; the project is deleted whatever happened. MemlaneUnreachable
    propagates when the very first request gets no answer."""
    run = Run(client, timeout, out)
    try:
        who = client.whoami()
    except MemlaneUnreachable:
        raise
    except MemlaneError as exc:
        run.report("connect", "FAIL", f"{client.base_url} answered {exc.status}: {exc.error}")
        return run
    run.report("connect", "PASS", f"{client.base_url} accepts the key (organization {who.get('organization_id', '?')})")
    _search_report(run)
    try:
        _checks(run)
    except MemlaneUnreachable as exc:
        run.report("aborted", "FAIL", exc.error)
    finally:
        _cleanup(run)
    return run


def _search_report(run: Run) -> None:
    try:
        health = run.client.request("GET", "/health")
    except MemlaneError:
        health = {}
    backend = health.get("search") if isinstance(health, dict) else None
    if backend not in SEARCH_BACKENDS:
        run.report("search", "SKIP", "server does not name its search index (no known `search` in GET /health)")
        return
    run.backend = backend
    name, vector, keyword, receipt, _ = SEARCH_BACKENDS[backend]
    run.report("search", "PASS", f"{name}: `vector` runs {vector}, `keyword` {keyword}, `receipt` reads {receipt}")


def _hint(run: Run) -> str:
    return f"; check {SEARCH_BACKENDS[run.backend][4]}" if run.backend in SEARCH_BACKENDS else ""


def _checks(run: Run) -> None:
    client = run.client
    fields = client.schema_fields("MemoryIn")
    name = f"memlane-check-{secrets.token_hex(4)}"
    try:
        run.project_id = client.create_project(name, description="memlane check: deleted when the check ends")["id"]
    except MemlaneError as exc:
        run.report("save", "FAIL", f"could not create project {name}: {exc.error}")
        return
    token = "zq" + secrets.token_hex(4) + "vort"  # made up: in no model's vocabulary, in one memory only
    memories = {
        "paraphrase": PARAPHRASE_MEMORY,
        "keyword": f"The staging bucket opens with the deploy passphrase {token} until Friday.",
        "distractor-1": DISTRACTORS[0],
        "distractor-2": DISTRACTORS[1],
    }
    try:
        for role, text in memories.items():
            run.saved[role] = client.remember(text, project_id=run.project_id, title=f"memlane check: {role}")["id"]
        conversation = "conversation_id" in fields
        if conversation:
            _save_conversation(run, fields)
    except MemlaneError as exc:
        run.report("save", "FAIL", f"save refused after {len(run.saved)}: {exc.status} {exc.error}")
        return
    run.report("save", "PASS", f"{len(run.saved)} memories saved into project {name} ({run.project_id})")
    if not _wait_ready(run):
        return
    _recall_check(run, "vector", PARAPHRASE_QUERY, "paraphrase", "a paraphrase with no word in common")
    _recall_check(run, "keyword", token, "keyword", f"the made-up token {token}")
    if conversation:
        _conversation_check(run)
    else:
        run.report("conversation", "SKIP", "server has no conversation signal (MemoryIn has no conversation_id)")
    _floor_check(run)
    _receipt_check(run)


def _save_conversation(run: Run, fields: frozenset[str]) -> None:
    conversation_id = f"memlane-check-{secrets.token_hex(4)}"
    order = next((f for f in ORDER_FIELDS if f in fields), None)
    said = next((f for f in TIME_FIELDS if f in fields), None)
    start = datetime.now(UTC) - timedelta(minutes=5)
    for i, text in enumerate(CONVERSATION):
        extra: dict[str, Any] = {"conversation_id": conversation_id}
        if order:
            extra[order] = i
        elif said:
            extra[said] = (start + timedelta(seconds=30 * i)).isoformat()
        role = "question" if i == 0 else "answer"
        run.saved[role] = run.client.remember(text, project_id=run.project_id, title=f"memlane check: {role}",
                                              **extra)["id"]


def _wait_ready(run: Run) -> bool:
    started = time.monotonic()
    pending = dict(run.saved)
    while pending:
        for role, doc_id in list(pending.items()):
            try:
                status = run.client.document(doc_id).get("status")
            except MemlaneError as exc:
                if exc.status == 404:  # not visible yet (a queued save on AWS)
                    continue
                raise
            if status == "ready":
                del pending[role]
            elif status == "failed":
                run.report("ready", "FAIL", f"the {role} memory ({doc_id}) failed to process")
                return False
        if not pending:
            break
        if time.monotonic() - started > run.timeout:
            run.report("ready", "FAIL", f"still not ready after {run.timeout:g} s: {', '.join(sorted(pending))}")
            return False
        time.sleep(POLL_S)
    run.report("ready", "PASS", f"{len(run.saved)} memories ready after {time.monotonic() - started:.1f} s")
    return True


def _recall(run: Run, query: str) -> dict[str, Any]:
    return dict(run.client.recall(query, project_id=run.project_id, limit=RECALL_LIMIT))


def _rank_of(answer: dict[str, Any], doc_id: str) -> int | None:
    ids = [r.get("document_id") for r in answer.get("results") or []]
    return ids.index(doc_id) + 1 if doc_id in ids else None


def _top(answer: dict[str, Any]) -> str:
    results = answer.get("results") or []
    if not results:
        return "nothing"
    first = results[0]
    return f"{first.get('title')!r} (score {first.get('score')})"


def _recall_check(run: Run, name: str, query: str, role: str, what: str) -> None:
    try:
        answer = _recall(run, query)
    except MemlaneError as exc:
        run.report(name, "FAIL", f"recall refused: {exc.status} {exc.error}")
        return
    rank = _rank_of(answer, run.saved[role])
    if rank == 1:
        score = answer["results"][0].get("score")
        run.report(name, "PASS", f"{what} found its memory first (score {score}, {answer.get('query_time_ms')} ms)")
    else:
        where = f"at rank {rank}" if rank else f"not in the first {RECALL_LIMIT}"
        run.report(name, "FAIL", f"{what} found its memory {where}; first was {_top(answer)}{_hint(run)}")
    if name == "vector":
        _rerank_report(run, answer)


def _rerank_report(run: Run, answer: dict[str, Any]) -> None:
    rerank = answer.get("rerank")
    if not isinstance(rerank, dict):
        run.report("rerank", "SKIP", "no rerank stage on this server (off by default; docs/deploy.md)")
    elif rerank.get("status") == "applied":
        run.report("rerank", "PASS", f"{rerank.get('model')} reranked {rerank.get('reranked')} memories")
    elif "refused" in str(rerank.get("reason", "")):  # access denied, model not enabled: a configuration fault
        run.report("rerank", "FAIL", f"{rerank.get('model')} skipped: {rerank.get('reason')}")
    else:  # throttled or unavailable: the answer is still right, the stage will run again
        run.report("rerank", "SKIP", f"{rerank.get('model')} skipped this time: {rerank.get('reason')}")


def _conversation_check(run: Run) -> None:
    try:
        answer = _recall(run, CONVERSATION_QUERY)
    except MemlaneError as exc:
        run.report("conversation", "FAIL", f"recall refused: {exc.status} {exc.error}")
        return
    rank = _rank_of(answer, run.saved["answer"])
    stages = answer.get("stages")
    said = f"; stages: {stages}" if stages is not None else ""
    if rank is not None and rank <= 2:
        run.report("conversation", "PASS", f"the answer that never names the ferry came back at rank {rank}{said}")
    else:
        where = f"at rank {rank}" if rank else f"not in the first {RECALL_LIMIT}"
        run.report("conversation", "FAIL", f"the answer saved after its question came back {where}{said}")


def _floor_check(run: Run) -> None:
    nonsense = "blorvex quindle sprackwum tiffel"
    try:
        answer = _recall(run, nonsense)
    except MemlaneError as exc:
        run.report("floor", "FAIL", f"recall refused: {exc.status} {exc.error}")
        return
    if "floor" not in answer:
        run.report("floor", "SKIP", f"server has no relevance floor (the answer has no `floor`; "
                                    f"{len(answer.get('results') or [])} results for nonsense)")
        return
    results = answer.get("results") or []
    if not results:
        run.report("floor", "PASS", f"a nonsense query returned nothing (floor {answer['floor']})")
    else:
        run.report("floor", "FAIL", f"a nonsense query returned {len(results)}, first {_top(answer)} "
                                    f"(floor {answer['floor']})")


def _receipt_check(run: Run) -> None:
    doc_id = run.saved["distractor-2"]
    try:
        deleted = run.client.delete_document(doc_id)
        receipt_id = deleted["receipt"]["id"]
        receipt = run.client.deletion(receipt_id)
    except MemlaneError as exc:
        run.report("receipt", "FAIL", f"delete or receipt refused: {exc.status} {exc.error}")
        return
    except (KeyError, TypeError):
        run.report("receipt", "FAIL", "the delete answered without a receipt id")
        return
    del run.saved["distractor-2"]
    stores = ", ".join(f"{c.get('store')}" for c in receipt.get("checks") or [])
    if receipt.get("verified") and doc_id in (receipt.get("documents") or []):
        run.report("receipt", "PASS", f"receipt {receipt_id} verified: nothing left in {stores}")
    else:
        held = [c for c in receipt.get("checks") or [] if not c.get("clean", True)]
        run.report("receipt", "FAIL", f"receipt {receipt_id} not verified (verified={receipt.get('verified')}, "
                                      f"stores still holding: {held or stores})")


def _cleanup(run: Run) -> None:
    if run.project_id is None:
        return
    try:
        deleted = run.client.delete_project(run.project_id)
    except MemlaneError as exc:
        run.report("cleanup", "FAIL", f"project {run.project_id} not deleted: {exc.status} {exc.error}; "
                                      "delete it with DELETE /v3/projects/{id}")
        return
    verified = (deleted.get("receipt") or {}).get("verified")
    status = "PASS" if deleted.get("deleted") and verified else "FAIL"
    run.report("cleanup", status, f"project deleted with {deleted.get('documents_deleted')} documents "
                                  f"(receipt verified: {verified})")
