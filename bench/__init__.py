"""Benchmarks, evaluations and load tests: run on a developer's machine from the repository root
(`make bench…`, `make eval…`, or `python -m bench.<name>`), never shipped.

They sit above every layer of memlane, like the tests: they may import anything from it, and
nothing in memlane imports them.

- ingest_recall: `make bench` - ingestion throughput, recall latency at 10k/100k chunks, and the
  load run (reliability row 19).
- concurrency: `make bench-concurrency` - recall and /health while two clients save long documents.
- embedder: `make bench-embedder` - the local embedder, before (torch) and after (ONNX Runtime).
- aws_save: `make bench-aws-save` - the deployed API's answer to a small save, modelled on moto.
- webapp: `make bench-web` - the web app's first load, typing to results and JavaScript size.
- eval: `make eval` - the recall workload suite (conversations, facts and notes, code,
  documentation with the crawl's throughput, abstention), each beside plain BM25 and MiniLM
  baselines; `make eval-<workload>` runs one; embeddings cached between runs (bench/eval/cache.py).
- load: concurrent clients saving and recalling against a running server (used by the above and
  by tests/integration/test_load.py).
- corpus, common: synthetic corpora; the machine line, ports, writing a BENCHMARKS.md section.
"""
