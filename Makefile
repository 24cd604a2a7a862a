# A newcomer needs two targets: `make run` and `make test`. Everything else is a guessable extra.
# `make run ARGS="--allow-private-network"` passes ARGS on to `memlane serve` (PORT and HOST too).
# What `make run` prints starts with memlane's own lines: the steps say what they do in one line each,
# and pip, npm and Vite speak only when something fails.
PYTHON ?= python3.11
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
HOST   ?= 127.0.0.1
PORT   ?= 7432
ARGS   ?=

.PHONY: run test setup ocr lint synth layers bench bench-scale bench-nlp bench-entities bench-concurrency bench-embedder bench-aws-save bench-rerank eval eval-conversations eval-facts eval-code \
	eval-docs eval-notes eval-abstention eval-floor eval-floor-locomo context-pack-eval test-numeric clean extension integrations-env clients-test \
	extension-build extension-test chromium \
	web web-test bench-web bench-page-weight screenshots types docs configuration-docs

# jsii (behind aws-cdk-lib) warns on every run under Node 20; the warning is not actionable here.
export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION := 20

# pip -qq: its warnings (and setuptools' from the build backend) stay out of the way; errors still show.
$(STAMP): pyproject.toml clients/python/pyproject.toml
	@echo "memlane: installing memlane and its Python packages into $(VENV) (once; up to ten minutes)"
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@$(BIN)/pip install -qq --upgrade pip
	@$(BIN)/pip install -qq torch==2.13.0
	@$(BIN)/pip install -qq -e ./clients/python
	@$(BIN)/pip install -qq -e '.[dev]'
	@touch $(STAMP)

setup: $(STAMP) ocr

# The web app (web/): npm ci only when package-lock.json changed (offline after the first install,
# from npm's cache), the Vite build only when a source is newer than web/dist.
WEB_MODULES := web/node_modules/.package-lock.json
WEB_DIST    := web/dist/index.html
WEB_SOURCES := $(shell find web/src web/public -type f 2>/dev/null) web/index.html web/vite.config.ts \
               web/tsconfig.json web/package.json $(wildcard clients/typescript/src/*.ts)

$(WEB_MODULES): web/package-lock.json
	@echo "memlane: installing the web app's packages (npm ci, once)"
	@cd web && npm ci --no-audit --no-fund --prefer-offline --loglevel=error --silent
	@touch $(WEB_MODULES)

$(WEB_DIST): $(WEB_MODULES) $(WEB_SOURCES)
	@echo "memlane: building the web app (web/dist)"
	@cd web && npm run --silent build -- --logLevel warn

web: $(WEB_DIST)

web-test: $(WEB_MODULES)
	cd web && npx vitest run

# The API's TypeScript types (clients/typescript, used by web/ and extension/) and the Python client's
# models and MCP tool schemas (clients/python), generated from the OpenAPI document and the MCP tool
# definitions by codegen/ (`python -m codegen`); tests/unit/test_generated_clients.py fails when stale.
TYPES_MODULES := clients/typescript/node_modules/.package-lock.json

$(TYPES_MODULES): clients/typescript/package-lock.json
	cd clients/typescript && npm ci --no-audit --no-fund --prefer-offline --loglevel=error
	@touch $@

types: $(STAMP) $(TYPES_MODULES)
	$(BIN)/python -m codegen

# docs/configuration.md, written from the configuration model (memlane.config.reference): every variable
# with what it takes, its default and meaning; tests/docs/test_configuration_page.py fails when stale.
configuration-docs: $(STAMP)
	$(BIN)/python -m memlane.config.reference

# The documentation's pictures of the app (docs/screenshots, shown in docs/web-app.md), taken by its
# end-to-end tests.
screenshots: $(STAMP) $(WEB_DIST) chromium
	MEMLANE_SCREENSHOTS=docs/screenshots $(BIN)/python -m pytest tests/web -q -k "sideways"

# The documentation site (mkdocs.yml, docs/) into site/; --strict fails on a broken link or anchor and
# on a page missing from the navigation (tests/docs/test_site.py builds it the same way in make test).
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

run: $(STAMP) $(WEB_DIST) ocr
	@$(BIN)/memlane serve --host $(HOST) --port $(PORT) $(ARGS)

test: $(STAMP) ocr lint test-numeric extension-test extension-build chromium $(WEB_DIST) web-test $(TYPES_MODULES) integrations-env
	$(BIN)/python -m pytest

# The tests that compare floating-point work with recorded figures (marker `numeric`), under each OpenBLAS
# kernel an x86-64 machine may pick: a golden figure must hold on every processor CI can land on.
# Only the modules that carry the marker are collected (collecting the whole suite four times costs a minute).
NUMERIC_KERNELS ?= SkylakeX Haswell Zen Prescott
NUMERIC_TESTS   := $(shell grep -rl --include='*.py' 'mark.numeric' tests)
test-numeric: $(STAMP)
	@for kernel in $(NUMERIC_KERNELS); do \
		echo "OPENBLAS_CORETYPE=$$kernel"; \
		OPENBLAS_CORETYPE=$$kernel $(BIN)/python -m pytest -m numeric -q -p no:cacheprovider $(NUMERIC_TESTS) || exit 1; \
	done

# The LangChain and LlamaIndex integrations (clients/python/memlane_client/integrations) are tested with
# the real frameworks in their own environment, so they never move the main environment's pins;
# tests/integration/clients/test_framework_integrations.py runs clients/python/tests_integrations there.
INTEG       := .venv-integrations
INTEG_STAMP := $(INTEG)/.installed

$(INTEG_STAMP): clients/python/requirements-integrations.txt clients/python/pyproject.toml
	@test -x $(INTEG)/bin/python || $(PYTHON) -m venv $(INTEG)
	$(INTEG)/bin/pip install --quiet --upgrade pip
	$(INTEG)/bin/pip install --quiet -r clients/python/requirements-integrations.txt
	$(INTEG)/bin/pip install --quiet -e ./clients/python
	@touch $@

integrations-env: $(INTEG_STAMP)

# The clients alone: the Python client (unit, and against a loopback server), the TypeScript client
# and the AI SDK tools (node --test), LangChain and LlamaIndex, and every client example of README.md and docs/.
clients-test: $(STAMP) $(TYPES_MODULES) integrations-env
	$(BIN)/python -m pytest tests/unit/test_memlane_client.py tests/unit/test_generated_clients.py \
		tests/integration/clients -q

# OCR of images and scanned PDFs on this machine (the embedded default): Debian's Tesseract.
ocr:
	@command -v tesseract >/dev/null || (echo "memlane: installing Tesseract for OCR (apt-get, once)" && \
		apt-get update -qq && apt-get install -y -qq tesseract-ocr >/dev/null)

# The browser extension (extension/, WXT): `make extension` writes the Chrome and Firefox zips to
# extension/.output/; `extension-build` the unpacked Chrome build the end-to-end tests load.
EXT_DEPS := extension/node_modules/.package-lock.json

$(EXT_DEPS): extension/package-lock.json
	cd extension && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

extension: $(EXT_DEPS)
	cd extension && npx wxt zip && npx wxt zip -b firefox --mv3

extension-build: $(EXT_DEPS)
	cd extension && npx wxt build

extension-test: $(EXT_DEPS)
	cd extension && npx tsc --noEmit && npx vitest run

# Debian's Chromium runs the extension's end-to-end tests (Playwright cannot download a browser here).
chromium:
	@command -v chromium >/dev/null || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium)

# The guards `make test` runs first: ruff, mypy, the import rules in pyproject.toml
# ([tool.importlinter]: the layers, no cycles, the library never importing its Lambda functions);
# the complexity budget (ruff's C901 against tests/unit/complexity_budget.json: no new function over 10, none
# rising, and a gain written down); the LangChain and LlamaIndex integrations are type-checked in
# .venv-integrations, against the real frameworks.
lint: $(STAMP) integrations-env
	$(BIN)/ruff check memlane functions infra bench clients/python codegen tests
	$(BIN)/mypy memlane functions infra bench clients/python/memlane_client codegen
	$(BIN)/lint-imports --no-logo
	$(BIN)/python -m pytest -q -p no:cacheprovider tests/unit/test_complexity_budget.py
	cd clients/python && ../../$(INTEG)/bin/mypy memlane_client/integrations --ignore-missing-imports

# Synthesizes the CloudFormation templates into cdk.out/ (no Docker; the layer is built from
# manylinux wheels on first use).
synth: $(STAMP) $(WEB_DIST)
	@test -f layers/build/deps.json || $(BIN)/python layers/build.py --arch arm64
	$(BIN)/python app.py

layers: $(STAMP)
	$(BIN)/python layers/build.py --arch arm64

bench: $(STAMP)
	$(BIN)/python -m bench.ingest_recall

# Offline titles, summaries, tags and entities: today's method and the new one side by side, and the
# ingestion overhead over the embedder with the new summarizer.
bench-nlp: $(STAMP)
	$(BIN)/python -m bench.nlp --locomo $(SHARED)/eval/locomo-dev.json --write BENCHMARKS.md

# The entity extractor against its labelled set (bench/data/entities_labelled.json): precision and recall
# per kind, beside the figures measured before the extractor changed (bench/data/entities_before.json).
bench-entities: $(STAMP)
	$(BIN)/python -m bench.entities --baseline bench/data/entities_before.json --write BENCHMARKS.md

# The local server under save pressure: recall and /health latency while two clients save long documents.
bench-concurrency: $(STAMP)
	$(BIN)/python -m bench.concurrency --write BENCHMARKS.md

# The local embedder, before (torch) and after (ONNX Runtime fp32, int8): long chunks, short saves,
# query latency while documents embed, saves over HTTP; writes the embedder section of BENCHMARKS.md.
bench-embedder: $(STAMP)
	$(BIN)/python -m bench.embedder --out BENCHMARKS.md

# The deployed API's answer to a small save, modelled (moto + per-service latencies), and its AWS calls.
bench-aws-save: $(STAMP)
	$(BIN)/python -m bench.aws_save --write BENCHMARKS.md

# memlane's own overhead of the optional rerank stage, the Bedrock model stubbed (botocore's Stubber).
bench-rerank: $(STAMP)
	$(BIN)/python -m bench.rerank_overhead --write BENCHMARKS.md

# The embedded engine at scale (issue 26): 100k, 1M and 3M chunks in data directories under
# SCALE_ROOT (kept between runs: a fill takes long), each figure from its own process; root is
# needed to drop the page cache for the cold start. Prints JSON rows (BENCHMARKS.md, "Scale").
SCALE_ROOT ?= /var/tmp/memlane-scale
bench-scale: $(STAMP)
	$(BIN)/python -m bench.scale all --root $(SCALE_ROOT) --sizes 100000,1000000,3000000

# A memory page's transfer size from the local server, without and with compression, in headless
# Chromium; writes the page weight section of BENCHMARKS.md.
bench-page-weight: $(STAMP) $(WEB_DIST) chromium
	$(BIN)/python -m bench.page_weight --write BENCHMARKS.md

# The web app's figures (first load, typing to results, JavaScript size) at 10,000 memories, in
# headless Chromium against a local server; writes the web app section of BENCHMARKS.md.
bench-web: $(STAMP) $(WEB_DIST) chromium
	$(BIN)/python -m bench.webapp --write BENCHMARKS.md

# The recall workload suite (bench/eval): conversations, facts and notes, code, documentation and
# abstention, each beside plain BM25 and MiniLM baselines, through a local server on 127.0.0.1; writes
# BENCHMARKS.md. Embeddings are cached between runs (bench/.cache, or MEMLANE_EVAL_EMBED_CACHE).
# One workload alone: make eval-conversations | eval-facts | eval-code | eval-docs | eval-notes | eval-abstention.
# The relevance floor's calibration and the fusion's bound: make eval-floor.
PYDOCS ?= /usr/share/doc/python3.11/html
SHARED ?= ../shared
EVAL := $(BIN)/python -m bench.eval --memory $(SHARED)/eval/locomo-dev.json --docs-dir $(PYDOCS) \
	--queries $(SHARED)/eval/python-docs-queries.jsonl --notes $(SHARED)/eval/personal-notes-dev.jsonl --write BENCHMARKS.md
eval: $(STAMP)
	@test -d $(PYDOCS) || (apt-get update -qq && apt-get install -y -qq python3.11-doc)
	$(EVAL)

eval-conversations: $(STAMP)
	$(EVAL) --workloads conversations

eval-facts: $(STAMP)
	$(EVAL) --workloads facts

eval-code: $(STAMP)
	$(EVAL) --workloads code

eval-docs: $(STAMP)
	@test -d $(PYDOCS) || (apt-get update -qq && apt-get install -y -qq python3.11-doc)
	$(EVAL) --workloads docs

# One person's notes and their questions in their own words (issue 35): top-1, top-3, what comes back empty.
eval-notes: $(STAMP)
	$(EVAL) --workloads notes

# Abstention asks the other workloads' questions of projects that do not hold their answers.
eval-abstention: $(STAMP)
	$(EVAL) --workloads conversations,code,abstention

# Recall's two thresholds (issue 35): one recording of every workload's candidates (conversations, facts, code,
# personal notes; their unanswerable questions and nonsense), then the floor and the strong threshold chosen by
# one rule with the curve of what each costs on each workload (BENCHMARKS.md, "the floor and the strong threshold").
RELEVANCE_RECORD ?= bench/.cache/relevance.json
eval-floor: $(STAMP)
	@mkdir -p $(dir $(RELEVANCE_RECORD))
	$(BIN)/python -m bench.recall_record --memory $(SHARED)/eval/locomo-dev.json \
		--notes $(SHARED)/eval/personal-notes-dev.jsonl --out $(RELEVANCE_RECORD)
	$(BIN)/python -m bench.calibrate_relevance --record $(RELEVANCE_RECORD) \
		--notes $(SHARED)/eval/personal-notes-dev.jsonl --write BENCHMARKS.md

# LoCoMo alone, as the floor was calibrated before issue 35 (its cross-conversation abstention, related memories'
# floor), and from the same recording the most recall@10 any fusion of the two legs can reach.
FLOOR_RECORD ?= bench/.cache/floor.json
eval-floor-locomo: $(STAMP)
	@rm -f $(FLOOR_RECORD) && mkdir -p $(dir $(FLOOR_RECORD))
	$(BIN)/python -m bench.calibrate_floor --memory $(SHARED)/eval/locomo-dev.json --record $(FLOOR_RECORD) \
		--write BENCHMARKS.md
	$(BIN)/python -m bench.fusion_bound --record $(FLOOR_RECORD) --write BENCHMARKS.md

# What the assistant receives: evidence inside the context pack at 1,000 and 2,000 tokens (LoCoMo dev, personal notes).
context-pack-eval: $(STAMP)
	$(BIN)/python -m bench.context_pack_eval --memory $(SHARED)/eval/locomo-dev.json \
		--notes $(SHARED)/eval/personal-notes-dev.jsonl

clean:
	rm -rf $(VENV) $(INTEG) cdk.out .pytest_cache extension/node_modules extension/.output extension/.wxt
