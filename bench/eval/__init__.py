"""The recall workload suite (`make eval`, `python -m bench.eval`): one module per workload in
`workloads/`, the plain baselines in `baselines.py`, the embedding cache in `cache.py`, the
scoring (offline, from recorded rankings) in `scoring.py`, BENCHMARKS.md sections in `report.py`."""
