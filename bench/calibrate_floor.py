"""`python -m bench.calibrate_floor`: the relevance floor (memlane.recall.relevance), calibrated.

One run records the raw evidence of every candidate (no floor); every floor value and every setting
of the relevance function is then applied offline, so recalibrating takes seconds, not a run.

Data (../shared/eval/README.md): the LoCoMo dev conversations, one project per conversation, every
turn saved through POST /v3/memory as `make eval-memory` saves them (with --data-dir a rerun reuses
the saved memories: identical content is not embedded again). Then, through recall's own pipeline
(memlane.recall.pipeline, with recall's candidates and stages, in the server's process so every
candidate's evidence can be read):

- answerable: each conversation's questions (categories 1-4) asked of its own project;
- unanswerable: the same questions asked of the NEXT conversation's project (conv i → conv i+1);
- nonsense: NONSENSE_COUNT queries written here with a fixed seed (word salads, keyboard mash,
  questions from unrelated domains), asked of every project.

Per floor value: answerable recall@10 (results below the floor dropped, the next ones moving up, as
recall does), the share of unanswerable questions and of nonsense queries with nothing at or above
the floor.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import random
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

from bench.common import free_port, machine, write_section
from bench.eval.cache import CachedEmbedder, EmbeddingCache, cache_dir
from bench.eval.locomo import Conversation, load_conversations, parse_evidence, shared_eval_dir
from bench.eval.scoring import score
from bench.eval.workloads.conversations import turn_bodies

DEFAULT_DATA = shared_eval_dir() / "locomo-dev.json"
LIMIT = 10


def score_ranking(ranked_documents: list[str], evidence_documents: list[str]) -> dict[str, float]:
    """recall@k and hit@k of one question, one target per evidence turn."""
    return score(ranked_documents, [[d] for d in evidence_documents])


def _save_conversation(client: httpx.Client, conv: Conversation) -> dict[str, str]:
    """One project per conversation, one memory per turn with its conversation signal (as the
    conversations workload saves them); returns turn id -> document id, and the project."""
    r = client.post("/v3/projects", json={"name": f"locomo {conv.sample_id}"})
    r.raise_for_status()
    project_id = r.json()["id"]
    documents: dict[str, str] = {"__project__": project_id}
    for turn, body in zip(conv.turns, turn_bodies(conv, project_id, signal=True), strict=True):
        r = client.post("/v3/memory", json=body)
        r.raise_for_status()
        documents[turn.dia_id] = r.json()["id"]
    return documents

PROG = "python -m bench.calibrate_floor"
NONSENSE_COUNT = 50
SEED = 22
FLOORS = sorted({0.0, *(round(0.05 * i, 2) for i in range(1, 13)), *(round(0.01 * i, 2) for i in range(20, 40))})
RELATED_FLOORS = [round(0.05 * i, 2) for i in range(0, 20)]

_SALAD_WORDS = ["lantern", "quartz", "membrane", "velvet", "harbor", "spindle", "oxide", "tundra", "gravel", "saxophone", "meridian", "lattice", "ferret", "pylon", "basalt", "walrus", "prism", "cobalt", "nebula", "turbine", "mustard", "glacier", "fjord", "sonnet", "abacus", "trellis", "piston", "orchid", "magnet", "vortex", "plankton", "anvil", "canyon", "pepper", "ribbon", "sulfur", "kettle", "yodel", "zeppelin", "parsnip", "quiver", "barnacle", "tangent", "mosaic", "nozzle", "compass", "dynamo", "falcon", "gazebo", "hinge", "igloo", "jigsaw", "kelp", "ledger", "monsoon"]
_UNRELATED = [
    "torque specification for cylinder head bolts on a diesel engine",
    "how do I compute eigenvalues of a sparse matrix in Fortran",
    "tax treatment of depreciation on rental property improvements",
    "what is the melting point of tungsten carbide",
    "configure BGP route reflectors on a core router",
    "latin declension of third-group neuter nouns",
    "mitochondrial DNA haplogroup migration routes",
    "how to calibrate a gas chromatograph detector",
    "maximum load rating of a steel I-beam span",
    "rules of castling in chess when the king is in check",
    "orbital period of the moons of Neptune",
    "pH buffer preparation with sodium phosphate",
    "firmware update procedure for a programmable logic controller",
    "soil nitrogen fixation by legume root nodules",
    "compile a Rust crate for a bare-metal ARM target",
]


def nonsense_queries(seed: int = SEED, count: int = NONSENSE_COUNT) -> list[str]:
    """Fixed, seeded queries that no memory answers: word salads, keyboard mash, unrelated domains."""
    rng = random.Random(seed)
    out: list[str] = []
    unrelated = list(_UNRELATED)
    rng.shuffle(unrelated)
    out += unrelated[: min(len(unrelated), count // 3)]
    while len(out) < count * 2 // 3:
        out.append(" ".join(rng.sample(_SALAD_WORDS, rng.randint(3, 7))))
    keys = "qwertyuiopasdfghjklzxcvbnm"
    while len(out) < count:
        out.append(" ".join("".join(rng.choice(keys) for _ in range(rng.randint(3, 9)))
                            for _ in range(rng.randint(1, 4))))
    return out


# --------------------------------------------------------------------------- recording


def _record(svc: Any, org_id: str, project_id: str, query: str, exact: bool = True) -> dict[str, Any]:
    """Every candidate document of recall's pipeline for this query (no floor), best first, with the
    raw evidence of its chunks: [cosine, raw BM25 as relevance reads it (the searched scope's), exact match (a distinctive term or every content word)]."""
    from memlane.ports import RecallFilters, SearchScope
    from memlane.recall import relevance as rel
    from memlane.recall.pipeline import retrieve
    from memlane.recall.recipes import MEMORY_RECALL, RELATED_MEMORIES

    scope = SearchScope(organization_id=org_id, project_ids=(project_id,), filters=RecallFilters(),
                        now=svc.clock.now())
    # exact_match above 1: every chunk the text leg found is checked for an exact term.
    probe = replace(rel.calibration_for(svc.embedder.id), exact_match=2.0)
    recipe = MEMORY_RECALL if exact else RELATED_MEMORIES
    found = retrieve(svc, replace(recipe.retrieval(svc, query, scope, results=LIMIT, min_relevance=0.0),
                                  calibration=probe))
    return {
        "terms": rel.query_terms(query),
        "documents": [[g.document_id, [[round(c.vector_score, 5), round(c.bm25, 4), c.exact, c.code] for c in g.chunks]]
                      for g in found.documents],
    }


def related_pairs(raw: dict[str, Any]) -> list[tuple[str, list[str]]]:
    """Turns that belong together, from the data's own labels: the turns one observation fact cites
    together, and the evidence turns of one question. Each group gives (first turn, the others)."""
    groups: list[list[str]] = []
    for session in (raw.get("observation") or {}).values():
        for facts in (session or {}).values():
            for fact in facts:
                groups.append(parse_evidence(fact[1:] if isinstance(fact, list) else []))
    for qa in raw.get("qa") or []:
        groups.append(parse_evidence(qa.get("evidence") or []))
    seen: set[tuple[str, ...]] = set()
    out = []
    for g in groups:
        if len(g) >= 2 and tuple(g) not in seen:
            seen.add(tuple(g))
            out.append((g[0], g[1:]))
    return out


def _related_record(svc: Any, org_id: str, project_id: str, document_id: str) -> dict[str, Any]:
    """As related memories rank (memlane.services.related): the document's title, summary and opening
    as the query, recall's pipeline, the document itself left out."""
    from memlane.services.related import QUERY_CHARS

    doc = svc.metadata.get_document(org_id, document_id)
    query = "\n".join(p for p in (doc.title, doc.summary or "", doc.content[:QUERY_CHARS]) if p).strip()
    rec = _record(svc, org_id, project_id, query[:10_000], exact=False)
    rec["documents"] = [d for d in rec["documents"] if d[0] != document_id]
    return rec


def record(args: argparse.Namespace) -> dict[str, Any]:
    from memlane.adapters.local.embedder import MiniLMEmbedder
    from memlane.config import Settings
    from memlane.local.server import LocalServer
    from memlane.services.keys import create_key

    conversations = load_conversations(Path(args.memory))
    # The embedded default, through the recall suite's embedding cache (bench.eval.cache): a rerun, or
    # a recording after `make eval`, embeds nothing it has embedded before.
    cache = EmbeddingCache(cache_dir(args.cache_dir) / "embeddings.sqlite3")
    with tempfile.TemporaryDirectory(prefix="memlane-calibrate-") as tmp:
        settings = Settings.from_env(data_dir=Path(args.data_dir) if args.data_dir else Path(tmp) / "data",
                                     embedder="local")
        embedder = CachedEmbedder(MiniLMEmbedder(window=settings.embedder_window), cache)
        server = LocalServer(settings, host="127.0.0.1", port=free_port(), embedder=embedder)
        server.prepare()
        svc = server.stack.services
        svc.embedder.embed_query("warm up")
        server.start_in_thread()
        key, _, org = create_key(server.stack.metadata, "locomo-eval", "calibrate", rate_limit_per_minute=1_000_000)
        try:
            with httpx.Client(base_url=f"http://127.0.0.1:{server.port}",
                              headers={"Authorization": f"Bearer {key}"}, timeout=120) as client:
                saved = []
                for conv in conversations:
                    t0 = time.monotonic()
                    documents = _save_conversation(client, conv)
                    saved.append((conv, documents.pop("__project__"), documents))
                    print(f"{conv.sample_id}: saved in {time.monotonic() - t0:.0f} s", file=sys.stderr, flush=True)
            out: dict[str, Any] = {"embedder": svc.embedder.id, "answerable": [], "unanswerable": [], "nonsense": [],
                                   # a document's chunks recorded at most (its best few, as recall shows them)
                                   "chunks_per_document": svc.settings.max_chunks_per_document}
            t0 = time.monotonic()
            for i, (conv, project_id, documents) in enumerate(saved):
                other = saved[(i + 1) % len(saved)][1]
                for q in conv.questions:
                    evidence = [documents[e] for e in q.evidence]
                    out["answerable"].append({**_record(svc, org.id, project_id, q.question), "evidence": evidence,
                                              "category": q.category, "conversation": conv.sample_id,
                                              "query": q.question})
                    out["unanswerable"].append({**_record(svc, org.id, other, q.question),
                                                "conversation": conv.sample_id})
                print(f"{conv.sample_id}: {len(conv.questions)} questions asked twice", file=sys.stderr, flush=True)
            for query in nonsense_queries():
                for _, project_id, _ in saved:
                    out["nonsense"].append({**_record(svc, org.id, project_id, query), "query": query})
            # Related memories: a whole memory as the query (their own floor).
            raw = {c["sample_id"]: c for c in json.loads(Path(args.memory).read_text())}
            related: dict[str, list[Any]] = {"answerable": [], "unanswerable": [], "nonsense": []}
            for i, (conv, project_id, documents) in enumerate(saved):
                other = saved[(i + 1) % len(saved)][1]
                for first, rest in related_pairs(raw[conv.sample_id]):
                    if first not in documents or not all(r in documents for r in rest):
                        continue
                    evidence = [documents[r] for r in rest if documents[r] != documents[first]]
                    if not evidence:
                        continue
                    related["answerable"].append({**_related_record(svc, org.id, project_id, documents[first]),
                                                  "evidence": evidence, "category": 0})
                    related["unanswerable"].append(_related_record(svc, org.id, other, documents[first]))
            out["related"] = related
            if args.code_sample > 0:
                out["code"] = _record_code(svc, org.id, client_for(server, key), args.code_sample)
            out["seconds"] = round(time.monotonic() - t0, 1)
            out["load_average"] = os.getloadavg()[1]
        finally:
            server.shutdown()
    return out


def client_for(server: Any, key: str) -> httpx.Client:
    return httpx.Client(base_url=f"http://127.0.0.1:{server.port}", headers={"Authorization": f"Bearer {key}"},
                        timeout=120)


def _record_code(svc: Any, org_id: str, client: httpx.Client, sample: int) -> dict[str, Any]:
    """The recall suite's code workload (bench.eval.workloads.code): stdlib functions saved as code
    in two projects by top-level module; each asked of its own project (answerable) and of the
    other one (unanswerable), and the nonsense queries asked of both."""
    from bench.eval.server import Api
    from bench.eval.workloads.code import sample_functions, stdlib_dir

    functions = sample_functions(stdlib_dir(), sample)
    api = Api(client, None, None)
    parts: dict[str, tuple[str, list[Any], list[str]]] = {}
    with client:
        for part in ("a", "b"):
            mine = [f for f in functions if f.part == part]
            project_id = api.project(f"stdlib code {part}")
            parts[part] = (project_id, mine, api.save_all([{**f.memory(), "project_id": project_id} for f in mine]))
    out: dict[str, list[Any]] = {"answerable": [], "unanswerable": [], "nonsense": []}
    for part, (project_id, mine, ids) in parts.items():
        other = parts["b" if part == "a" else "a"][0]
        for f, doc in zip(mine, ids, strict=True):
            out["answerable"].append({**_record(svc, org_id, project_id, f.query), "evidence": [doc], "category": 0,
                                      "query": f.query})
            out["unanswerable"].append(_record(svc, org_id, other, f.query))
        for query in nonsense_queries():
            out["nonsense"].append({**_record(svc, org_id, project_id, query), "query": query})
    print(f"code: {len(functions)} functions asked twice", file=sys.stderr, flush=True)
    return out


# --------------------------------------------------------------------------- offline analysis


@dataclass(frozen=True)
class Params:
    cosine_zero: float
    cosine_one: float
    bm25_scale: float
    exact_match: float
    # a code chunk's cosine scale (memlane.recall.relevance.Calibration.code)
    code_zero: float = 0.15
    code_one: float = 0.55


def _relevance(chunk: list[Any], terms: int, p: Params) -> float:
    """One chunk's relevance from its recorded evidence: [cosine, raw BM25, exact match] and, in
    recordings that have it, whether the chunk is code."""
    cosine, bm25, exact, *rest = chunk
    zero, one = (p.code_zero, p.code_one) if rest and rest[0] else (p.cosine_zero, p.cosine_one)
    v = min(1.0, max(0.0, (cosine - zero) / (one - zero)))
    t = 1.0 - math.exp(-(bm25 / max(1, terms)) / p.bm25_scale) if bm25 > 0 else 0.0
    return max(v, t, p.exact_match if exact else 0.0)


def _doc_relevance(rec: dict[str, Any], p: Params) -> list[tuple[str, float]]:
    return [(doc_id, max((_relevance(c, rec["terms"], p) for c in chunks), default=0.0))
            for doc_id, chunks in rec["documents"]]


def recall_at(questions: list[tuple[list[tuple[str, float]], list[str]]], floor: float) -> float:
    """Mean recall@10 of (documents with their relevance, best first; evidence) pairs when documents
    below `floor` are dropped and the next ones move up, as /v3/recall does."""
    total = sum(score_ranking([d for d, x in docs if x >= floor][:LIMIT], ev)["recall@10"] for docs, ev in questions)
    return total / len(questions)


def curve(data: dict[str, Any], p: Params, floors: list[float] = FLOORS) -> list[dict[str, float]]:
    ans = [(_doc_relevance(r, p), r["evidence"]) for r in data["answerable"]]
    una = [max((x for _, x in _doc_relevance(r, p)), default=0.0) for r in data["unanswerable"]]
    non = [max((x for _, x in _doc_relevance(r, p)), default=0.0) for r in data["nonsense"]]
    rows = []
    for f in floors:
        rows.append({
            "floor": f,
            "recall@10": recall_at(ans, f),
            "abstain_unanswerable": sum(1 for x in una if x < f) / len(una),
            "abstain_nonsense": sum(1 for x in non if x < f) / len(non) if non else float("nan"),
        })
    return rows


def held_out(data: dict[str, Any], p: Params, floors: list[float] = FLOORS,
             allowance: float = 0.02) -> list[dict[str, Any]]:
    """Whether the floor's rule generalizes to conversations it was not chosen on: for each
    conversation, the rule (`choose`) is applied to the other conversations' answerable questions
    alone, and that floor to the held-out one: its recall@10 without a floor and at that floor, and
    the share of its questions asked of another conversation's project that get nothing. A recording
    without conversation ids (before this field was recorded) gives no rows."""
    conversations = list(dict.fromkeys(r.get("conversation") for r in data["answerable"]))
    if len(conversations) < 2 or None in conversations:
        return []
    ranked = [(r["conversation"], (_doc_relevance(r, p), r["evidence"])) for r in data["answerable"]]
    asked_elsewhere = [(r.get("conversation"), max((x for _, x in _doc_relevance(r, p)), default=0.0))
                       for r in data["unanswerable"]]
    rows = []
    for conv in conversations:
        mine = [q for c, q in ranked if c == conv]
        others = [q for c, q in ranked if c != conv]
        floor = choose([{"floor": f, "recall@10": recall_at(others, f)} for f in floors], allowance)["floor"]
        elsewhere = [x for c, x in asked_elsewhere if c == conv]
        before, after = recall_at(mine, 0.0), recall_at(mine, floor)
        rows.append({
            "conversation": conv, "questions": len(mine), "floor": floor, "recall@10": before,
            "at_floor": after, "loss": before - after,
            "abstain_unanswerable": sum(1 for x in elsewhere if x < floor) / len(elsewhere) if elsewhere else float("nan"),
        })
    return rows


def held_out_markdown(rows: list[dict[str, Any]], allowance: float = 0.02) -> list[str]:
    if not rows:
        return []
    over = [r for r in rows if r["loss"] > allowance + 1e-9]
    n = sum(r["questions"] for r in rows)
    # pooled over the held-out questions, as the figures pool a workload's questions
    pooled_loss = sum(r["loss"] * r["questions"] for r in rows) / n
    pooled_abstain = sum(r["abstain_unanswerable"] * r["questions"] for r in rows) / n
    lines = [
        "",
        "Held out (does the rule hold on conversations it was not chosen on? the issue's targets are also "
        "checked on conversations this repository does not have): for each conversation, the highest floor "
        f"within {allowance} on the other conversations' questions alone, applied to the held-out one.",
        "",
        "| held-out conversation | questions | floor chosen on the others | its recall@10 without a floor | at that floor "
        "| loss | its questions asked of another conversation: nothing above the floor |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        lines.append(f"| {r['conversation']} | {r['questions']} | {r['floor']:.2f} | {r['recall@10']:.3f} | "
                     f"{r['at_floor']:.3f} | {r['loss']:+.3f} | {r['abstain_unanswerable']:.1%} |")
    lines += ["", f"Pooled over the held-out questions: recall@10 loses {pooled_loss:.3f}, and {pooled_abstain:.1%} of the "
              f"questions asked of another conversation get nothing; {len(over)} of {len(rows)} held-out conversations "
              f"lose more than {allowance} ({', '.join(r['conversation'] for r in over) or 'none'}); floors chosen "
              f"{min(r['floor'] for r in rows):.2f}-{max(r['floor'] for r in rows):.2f}."]
    return lines


def choose(rows: list[dict[str, float]], allowance: float = 0.02) -> dict[str, float]:
    """The highest floor whose answerable recall@10 is within `allowance` of no floor at all."""
    base = rows[0]["recall@10"]
    ok = [r for r in rows if r["recall@10"] >= base - allowance - 1e-9]
    return max(ok, key=lambda r: r["floor"])


def report_markdown(data: dict[str, Any], p: Params, rows: list[dict[str, float]], chosen: dict[str, float],
                    command: str) -> str:
    lines = [
        "## Relevance floor: calibration (MiniLM, LoCoMo dev)",
        "",
        f"Generated by `{command}` on {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {machine()}, load average "
        f"{data.get('load_average', 0):.1f}; embedder `{data['embedder']}`. One recording run (recall's pipeline "
        "with recall's candidates and stages, no floor: every candidate's cosine, raw BM25 (the organization's statistics: relevance's evidence) and exact "
        "match: a distinctive term or every content word); every floor is applied offline, results below it dropped and the next ones "
        f"moving up as /v3/recall does. {len(data['answerable'])} answerable questions (each LoCoMo dev "
        f"conversation's categories 1-4 on its own project), {len(data['unanswerable'])} unanswerable (the same "
        f"questions on the next conversation's project), {len(data['nonsense'])} nonsense trials "
        f"({NONSENSE_COUNT} seeded queries × 5 projects). Relevance: cosine rescaled from {p.cosine_zero} → 0 to "
        f"{p.cosine_one} → 1; BM25 per query term, 1 − exp(−x / {p.bm25_scale}); an exact match "
        f"{p.exact_match}; the maximum of the three.",
        "",
        "| floor | answerable recall@10 | unanswerable with nothing above the floor | nonsense with nothing |",
        "| --- | --- | --- | --- |",
    ]
    from memlane.recall.relevance import calibration_for

    default_floor = calibration_for(data["embedder"]).floor  # read off the recall suite's curve (BENCHMARKS.md)
    for r in rows:
        mark = " **(default)**" if r["floor"] == default_floor else ""
        mark += " (highest within 0.02 here)" if r["floor"] == chosen["floor"] else ""
        lines.append(f"| {r['floor']:.2f}{mark} | {r['recall@10']:.3f} | {r['abstain_unanswerable']:.1%} | "
                     f"{r['abstain_nonsense']:.1%} |")
    lines += held_out_markdown(held_out(data, p))
    code = data.get("code")
    if code and code["answerable"]:
        lines += [
            "",
            f"Code (the recall suite's code workload, its own cosine scale: {p.code_zero} → 0, {p.code_one} → 1): "
            f"{len(code['answerable'])} stdlib functions saved as code in two projects, each asked by its "
            "docstring's first sentence of its own project (answerable) and of the other one (unanswerable), and the "
            f"nonsense queries of both ({len(code['nonsense'])} trials).",
            "",
            "| floor | code recall@10 | other half with nothing above the floor | nonsense with nothing |",
            "| --- | --- | --- | --- |",
        ]
        for r in curve(code, p):
            mark = " **(default)**" if r["floor"] == default_floor else ""
            lines.append(f"| {r['floor']:.2f}{mark} | {r['recall@10']:.3f} | {r['abstain_unanswerable']:.1%} | "
                         f"{r['abstain_nonsense']:.1%} |")
    related = data.get("related")
    if related and related["answerable"]:
        r_rows = curve(related, p, RELATED_FLOORS)
        r_chosen = choose(r_rows)
        default = calibration_for(data["embedder"]).related_floor
        lines += [
            "",
            f"Related memories (their own floor: a whole memory as the query, as `GET /v3/documents/{{id}}/related` "
            f"asks): {len(related['answerable'])} memories whose related turns the data names (turns one observation "
            "fact cites together, or one question's evidence turns), asked of their own project (related recall@10, "
            "the memory itself left out) and of the next conversation's project (nothing related there).",
            "",
            "| floor | related recall@10 | other conversation's project: nothing above the floor |",
            "| --- | --- | --- |",
        ]
        for r in r_rows:
            mark = " **(default)**" if r["floor"] == default else ""
            mark += " (highest within 0.02)" if r["floor"] == r_chosen["floor"] else ""
            lines.append(f"| {r['floor']:.2f}{mark} | {r['recall@10']:.3f} | {r['abstain_unanswerable']:.1%} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog=PROG, description="Record recall evidence on LoCoMo dev and calibrate the "
                                 "relevance floor offline.")
    ap.add_argument("--memory", default=str(DEFAULT_DATA.resolve()), help="LoCoMo-style JSON")
    ap.add_argument("--data-dir", dest="data_dir", default=None, help="keep the memories here; a rerun reuses them")
    ap.add_argument("--record", metavar="JSON", default="calibration.json",
                    help="the recorded evidence; recorded when missing, read when present")
    ap.add_argument("--cosine-zero", type=float, default=0.3)
    ap.add_argument("--cosine-one", type=float, default=0.7)
    ap.add_argument("--bm25-scale", type=float, default=5.0)
    ap.add_argument("--exact-match", type=float, default=0.6)
    ap.add_argument("--code-cosine-zero", type=float, default=0.15, help="code chunks' cosine at relevance 0")
    ap.add_argument("--code-cosine-one", type=float, default=0.55, help="code chunks' cosine at relevance 1")
    ap.add_argument("--code-sample", type=int, default=300,
                    help="stdlib functions of the recall suite's code workload to record (0: none)")
    ap.add_argument("--cache-dir", dest="cache_dir", default=None,
                    help="the recall suite's embedding cache (default: $MEMLANE_EVAL_EMBED_CACHE or bench/.cache)")
    ap.add_argument("--write", metavar="BENCHMARKS.md", help="write the curve into this file's floor section")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    path = Path(args.record)
    if path.exists():
        data = json.loads(path.read_text())
    else:
        data = record(args)
        path.write_text(json.dumps(data))
    p = Params(args.cosine_zero, args.cosine_one, args.bm25_scale, args.exact_match, args.code_cosine_zero,
               args.code_cosine_one)
    rows = curve(data, p)
    chosen = choose(rows)
    for r in rows:
        print(f"floor {r['floor']:.2f}: recall@10 {r['recall@10']:.3f}, unanswerable abstain "
              f"{r['abstain_unanswerable']:.1%}, nonsense abstain {r['abstain_nonsense']:.1%}")
    print(f"highest floor within 0.02 of recall@10 without a floor: {chosen['floor']:.2f}")
    for r in held_out(data, p):
        print(f"held out {r['conversation']}: floor {r['floor']:.2f} chosen on the others; its recall@10 "
              f"{r['recall@10']:.3f} → {r['at_floor']:.3f} ({-r['loss']:+.3f}), asked elsewhere abstain "
              f"{r['abstain_unanswerable']:.1%}")
    if data.get("code"):
        for r in curve(data["code"], p):
            print(f"code floor {r['floor']:.2f}: recall@10 {r['recall@10']:.3f}, other half abstain "
                  f"{r['abstain_unanswerable']:.1%}, nonsense abstain {r['abstain_nonsense']:.1%}")
    related = data.get("related")
    if related and related["answerable"]:
        for r in curve(related, p, RELATED_FLOORS):
            print(f"related floor {r['floor']:.2f}: recall@10 {r['recall@10']:.3f}, other project abstain "
                  f"{r['abstain_unanswerable']:.1%}")
    if args.write:
        write_section(Path(args.write), "floor", report_markdown(data, p, rows, chosen, f"{PROG} --record FILE"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
