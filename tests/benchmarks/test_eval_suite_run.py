"""The recall suite end to end on tiny data: a local server on 127.0.0.1 with the real embedded model,
every workload (the docs as memories, without the crawl), BENCHMARKS.md written, and a second run
embedding nothing."""

from __future__ import annotations

import json

import pytest

from bench.eval.__main__ import main

pytestmark = [pytest.mark.slow, pytest.mark.integration]


def _locomo(path):
    items = []
    for sample, (who, other, topic, place) in {
        "c1": ("Ann", "Bo", "pottery", "Lisbon"),
        "c2": ("Cy", "Di", "chess", "Oslo"),
    }.items():
        conversation = {
            "speaker_a": who,
            "speaker_b": other,
            "session_1_date_time": "1:00 pm on 8 May, 2023",
            "session_1": [
                {"speaker": who, "dia_id": "D1:1", "text": f"I started a {topic} class last week."},
                {"speaker": other, "dia_id": "D1:2", "text": "That sounds fun, how is it going?"},
                {"speaker": who, "dia_id": "D1:3", "text": f"Great. Next month I am moving to {place}."},
            ],
        }
        observation = {"session_1_observation": {who: [[f"{who} started a {topic} class.", "D1:1"],
                                                       [f"{who} is moving to {place} next month.", "D1:3"]]}}
        qa = [{"question": f"What class did {who} start?", "answer": topic, "evidence": ["D1:1"], "category": 4},
              {"question": f"Where is {who} moving?", "answer": place, "evidence": ["D1:3"], "category": 4}]
        items.append({"sample_id": sample, "conversation": conversation, "observation": observation, "qa": qa})
    path.write_text(json.dumps(items))


def _stdlib(root):
    modules = {
        "alpha.py": ('def parse_header(line):\n    """Split an HTTP header line into its name and value."""\n'
                     '    name, _, value = line.partition(":")\n    return name.strip(), value.strip()\n'),
        "delta.py": ('def mean(values):\n    """Compute the arithmetic average of a list of numbers."""\n'
                     '    return sum(values) / len(values)\n'),
    }
    for name, source in modules.items():
        (root / name).write_text(source)


def _docs(root, queries):
    (root / "library").mkdir(parents=True)
    pages = {"json": "The json module encodes and decodes JSON text with dumps and loads.",
             "os": "Miscellaneous operating system interfaces: environment variables, files and processes."}
    for name, text in pages.items():
        (root / "library" / f"{name}.html").write_text(
            f"<html><head><title>{name}</title></head><body><main><h1>{name}</h1><p>{text}</p></main></body></html>")
    (root / "genindex.html").write_text("<html><body>index</body></html>")
    queries.write_text(json.dumps({"query": "how do I parse JSON text", "relevant": ["library/json.html"]}) + "\n"
                       + json.dumps({"query": "read an environment variable", "relevant": ["library/os.html"]}) + "\n")


def _notes(path):
    """Two notes of one person and a question of each kind, in the format of
    ../shared/eval/personal-notes-dev.jsonl (the test never reads data outside the repository)."""
    lines = [
        {"type": "note", "id": "n01", "title": "Bike lock", "content": "The padlock on the blue bicycle opens with 4417.",
         "tags": ["home"]},
        {"type": "note", "id": "n02", "title": None, "content": "# Passport\nMy passport expires on 3 May 2031.",
         "tags": ["travel"]},
        {"type": "question", "id": "q001", "query": "digits for the bicycle padlock", "answer": "n01",
         "kind": "overlap"},
        {"type": "question", "id": "q002", "query": "when does my travel document run out?", "answer": "n02",
         "kind": "paraphrase"},
        {"type": "question", "id": "q003", "query": "4417", "answer": "n01", "kind": "keyword"},
        {"type": "question", "id": "u01", "query": "what is my bank's sort code?", "answer": None,
         "kind": "unanswerable"},
        {"type": "question", "id": "x01", "query": "velvet teapot saxophone", "answer": None, "kind": "nonsense"},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


def test_the_suite_runs_every_workload_writes_its_sections_and_reruns_from_the_cache(tmp_path, capsys):
    data, stdlib, cache, bench = tmp_path / "locomo.json", tmp_path / "lib", tmp_path / "cache", tmp_path / "B.md"
    docs, queries = tmp_path / "docs", tmp_path / "q.jsonl"
    stdlib.mkdir()
    _locomo(data)
    _stdlib(stdlib)
    _docs(docs, queries)
    _notes(tmp_path / "notes.jsonl")
    argv = ["--memory", str(data), "--stdlib", str(stdlib), "--docs-dir", str(docs), "--queries", str(queries),
            "--notes", str(tmp_path / "notes.jsonl"), "--skip-crawl", "--cache-dir", str(cache), "--write", str(bench)]
    # When the suite runs
    assert main(argv) == 0
    first = capsys.readouterr()
    # Then it says which conversation mode ran, and writes every section it measured
    assert "turns saved WITH" in first.err  # WITH or WITHOUT, depending on the server's MemoryIn
    text = bench.read_text()
    for section in ("eval", "memory", "eval-facts", "eval-code", "eval-docs-memory", "eval-abstention"):
        assert f"<!-- bench:{section} -->" in text
    assert "<!-- bench:docsets -->" not in text  # no crawl ran: its section is left as it was
    assert "| conversations | 4 |" in text and "| facts | 4 |" in text and "| code | 2 |" in text
    assert "| docs as memories | 2 |" in text
    results = json.loads((cache / "results" / "code.json").read_text())
    # memlane-floor: the same questions asked as a client asks (the server's floor applies)
    assert {r["method"] for r in results["records"]} == {"memlane", "memlane-floor", "stages-off", "bm25", "minilm"}
    assert "memlane at the default floor" in text and "Asked again as a client asks" in text
    abstention = json.loads((cache / "results" / "abstention.json").read_text())
    # each conversation's questions of the other's project, each code question of the other half, each
    # docs question of the facts' project, and the fifty nonsense queries of every project (two
    # conversations, the facts, two code halves, the docs, the personal notes)
    assert len(abstention["info"]["projects"]) == 7
    assert len(abstention["records"]) == 4 + 2 + 2 + 50 * 7
    # And a second run embeds nothing: the server and the baselines read every vector from the cache
    assert main(argv) == 0
    second = capsys.readouterr().err
    assert second.count(" 0 computed)") == 6, second
