"""`Settings`: the part of memlane's configuration every host reads (the local server, the CLI,
`memlane mcp` and each Lambda function's composition) and passes inward as `Services.settings`:
where the data is, the embedder, recall's fusion and stages, contextual indexing, saves, media
budgets, the LLM, the public URL, browser origins and MCP answers. `Settings.from_env` also reads
the OAuth part (memlane.config.oauth) into `Settings.oauth`.

The defaults of the weights are memlane.domain.tuning's (RECALL_FUSION, NeighbourWeights,
ContextWeights): written once, there.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal, Self

from pydantic import BeforeValidator, field_validator

from memlane.config.oauth import OAuthVariables, PublicAddress
from memlane.config.variables import Refusal, Section, any_case, variable, whole_number_choice
from memlane.domain.errors import InvalidInputError
from memlane.domain.oauth import OAuthSettings
from memlane.domain.origins import ALLOWED_ORIGINS_ENV, parse_origins
from memlane.domain.tuning import RECALL_FUSION, ContextWeights, FusionWeights, NeighbourWeights

DEFAULT_PORT = 7432
ContextSides = Literal["none", "before", "both"]
Embedder = Literal["auto", "local", "local-int8", "local-torch", "openai", "bedrock"]
LLM = Literal["auto", "off", "openai", "bedrock"]
ENV_MCP_MAX_OUTPUT_CHARS = "MEMLANE_MCP_MAX_OUTPUT_CHARS"
ENV_EMBEDDER = "MEMLANE_EMBEDDER"
DEFAULT_MCP_MAX_OUTPUT_CHARS = 25_000  # what one MCP tool answer may put into the assistant's context
MIN_MCP_OUTPUT_CHARS = 1000
DEFAULT_LLM_TOKENS_PER_MONTH = 10_000_000
_NEIGHBOURS, _CONTEXT = NeighbourWeights(), ContextWeights()


class Settings(PublicAddress):
    """What every host reads, once, where it starts (see the module's docstring)."""

    data_dir: Path = variable(
        "MEMLANE_DATA_DIR", default_factory=lambda: Path.home() / ".memlane", section=Section.WHERE,
        shown="`~/.memlane`", flag="--data-dir",
        doc="the data directory: the SQLite file, the first key, the search cache "
            "([What memlane keeps](data.md#the-data-directory))")

    # ------------------------------------------------------------------ embeddings and models
    openai_api_key: str | None = variable(
        "OPENAI_API_KEY", None, section=Section.MODELS, takes="an OpenAI API key",
        doc="when set, new data directories embed with `text-embedding-3-small` and summarize with "
            "`gpt-4o-mini`; images are read by `gpt-4o-mini` (vision) and recordings transcribed by "
            "`whisper-1`; and it is the LLM's key unless `MEMLANE_LLM_API_KEY` says otherwise")
    embedder: Annotated[Embedder, BeforeValidator(any_case)] = variable(
        ENV_EMBEDDER, "auto", section=Section.MODELS,
        doc="`auto`: OpenAI's when `OPENAI_API_KEY` is set, else the local model; `local` or `openai` to "
            "force one; `local-int8` (MiniLM with int8 weights, its own embedder id) or `local-torch` (the "
            "same vectors as `local`, through sentence-transformers). On AWS the stack sets `bedrock` "
            "(Amazon Titan; on your machine, where `--aws` commands read it, the local model) or `openai`")
    # Word pieces the local embedder reads of each text (memlane.adapters.local.embedder).
    embedder_window: Annotated[Literal[128, 256], BeforeValidator(whole_number_choice)] = variable(
        "MEMLANE_EMBEDDER_WINDOW", 256, section=Section.MODELS,
        doc="word pieces the local embedder reads of each chunk; `128` (what all-MiniLM-L6-v2 was trained "
            "on) embeds long chunks about twice as fast at a slightly lower documentation score; its own "
            "embedder id, so a data directory switches with `memlane reindex`")

    # ------------------------------------------------------------------ ranking
    weight_vector: float = variable(
        "MEMLANE_WEIGHT_VECTOR", RECALL_FUSION.vector, ge=0, section=Section.RANKING,
        doc="the fusion weight of meaning (the cosine of the query's and the chunk's vectors)")
    weight_text: float = variable(
        "MEMLANE_WEIGHT_TEXT", RECALL_FUSION.text, ge=0, section=Section.RANKING,
        doc="the fusion weight of words (BM25 over the batch's best)")
    weight_recency: float = variable(
        "MEMLANE_WEIGHT_RECENCY", RECALL_FUSION.recency, ge=0, section=Section.RANKING,
        doc=f"the fusion weight of recency (exp(−age in days / {RECALL_FUSION.recency_days:g}))")
    # Each leg scores the other's candidates (memlane.domain.tuning.FusionWeights.complete_legs).
    fusion_complete_legs: bool = variable(
        "MEMLANE_FUSION_COMPLETE_LEGS", RECALL_FUSION.complete_legs, section=Section.RANKING,
        doc="each search leg scores the other leg's candidates, so every candidate has its real cosine and "
            "BM25 (`0`: each leg's own top 50 only, a missing score counting 0)")
    # The text share's divisor (memlane.domain.tuning.FusionWeights.text_reference).
    fusion_text_reference: float = variable(
        "MEMLANE_FUSION_TEXT_REFERENCE", RECALL_FUSION.text_reference, ge=0, unit="BM25 per query word",
        section=Section.RANKING,
        doc="the word share's divisor: the batch's best BM25, never less than this per query word, so one "
            "incidental shared word cannot outvote meaning (`0`: the batch maximum alone, as the formula is "
            "written)")
    # The text share scaled by the share of the question's words a chunk holds
    # (memlane.domain.tuning.FusionWeights.text_coverage).
    fusion_text_coverage: float = variable(
        "MEMLANE_FUSION_TEXT_COVERAGE", RECALL_FUSION.text_coverage, ge=0, unit="exponent",
        section=Section.RANKING,
        doc="a prose chunk's word share is scaled by (the share of the question's content words it holds) to "
            "this power, so one incidental word of a longer question is weak evidence (`0`: no scaling; code "
            "and messages of a conversation are never scaled)")
    # A code chunk's text share by its own BM25 evidence, not over the batch maximum
    # (memlane.domain.tuning.FusionWeights.code_text_evidence).
    fusion_code_text_evidence: bool = variable(
        "MEMLANE_FUSION_CODE_TEXT_EVIDENCE", RECALL_FUSION.code_text_evidence, section=Section.RANKING,
        doc="a code chunk's word share by its own evidence, not over the batch maximum (`0`: the formula "
            "as written for code too)")
    # Identifier words (memlane.ingest.identifiers). Off by default: on the recall suite it moved code
    # MRR@10 +0.004 but lost one of 300 code questions at the default floor (BENCHMARKS.md).
    index_identifier_words: bool = variable(
        "MEMLANE_INDEX_IDENTIFIER_WORDS", RECALL_FUSION.identifier_words, section=Section.RANKING,
        doc="`1`: code is also indexed under the words of its identifiers (`getUserName` → get user name), "
            "and a query naming one also searches for its words; `memlane reindex` applies it to what is "
            "stored")
    # Recall's neighbouring-messages stage (memlane.recall.neighbours).
    recall_neighbour_weight: float = variable(
        "MEMLANE_RECALL_NEIGHBOUR_WEIGHT", _NEIGHBOURS.weight, ge=0, section=Section.RANKING,
        doc="the share of the best neighbouring message's score a recalled message gains; 0 turns the "
            "stage off")
    # Contextual indexing (memlane.documents.contextual).
    context_sides: Annotated[ContextSides, BeforeValidator(any_case)] = variable(
        "MEMLANE_CONTEXT_SIDES", _CONTEXT.sides, section=Section.RANKING,
        doc="contextual indexing: a short message is indexed with the message before it and the one after "
            "(`both`), the one before only (`before`), or alone (`none`)")
    context_text_weight: float = variable(
        "MEMLANE_CONTEXT_TEXT_WEIGHT", _CONTEXT.text_weight, ge=0, section=Section.RANKING,
        doc="weight of a neighbour's words in the word leg against 1 for the message's own; 0 indexes no "
            "context text")
    context_vector: bool = variable(
        "MEMLANE_CONTEXT_VECTOR", _CONTEXT.vector, section=Section.RANKING,
        doc="`0`: a message's vector is its own embedding only, not mixed with its window's")
    context_vector_sides: Annotated[Literal["before", "both"], BeforeValidator(any_case)] = variable(
        "MEMLANE_CONTEXT_VECTOR_SIDES", "both" if _CONTEXT.vector_after else "before", section=Section.RANKING,
        doc="`before`: the vector's window leaves out the message after, so a save never re-embeds the "
            "previous message: saving one message at a time is about twice as fast, at a recall@10 0.002 "
            "lower on LoCoMo")

    # ------------------------------------------------------------------ saves, media and the LLM
    inline_max_chars: int = variable(
        "MEMLANE_INLINE_MAX_CHARS", 20_000, ge=0, unit="characters", section=Section.SAVES,
        doc="saves up to this size are written in the request (201); larger ones are queued (202)")
    # Media work per organization and UTC day (memlane.documents.media_budget).
    media_ocr_seconds_per_day: float = variable(
        "MEMLANE_MEDIA_OCR_SECONDS_PER_DAY", 3600.0, ge=0, unit="seconds", section=Section.SAVES,
        doc="OCR engine time an organization may use per UTC day on this machine; over it, images wait "
            "(queued) for the next day; 0 turns the budget off")
    media_transcribe_seconds_per_day: float = variable(
        "MEMLANE_MEDIA_TRANSCRIBE_SECONDS_PER_DAY", 3600.0, ge=0, unit="seconds", section=Section.SAVES,
        doc="transcription engine time per organization and UTC day on this machine; 0 turns it off")
    media_textract_pages_per_day: float = variable(
        "MEMLANE_MEDIA_TEXTRACT_PAGES_PER_DAY", 1000.0, ge=0, unit="pages", section=Section.SAVES,
        doc="Amazon Textract pages per organization and UTC day (AWS); 0 turns it off")
    media_transcribe_minutes_per_day: float = variable(
        "MEMLANE_MEDIA_TRANSCRIBE_MINUTES_PER_DAY", 600.0, ge=0, unit="minutes", section=Section.SAVES,
        doc="Amazon Transcribe minutes per organization and UTC day (AWS); 0 turns it off")
    # The LLM that extracts facts from conversations (memlane.conversations).
    llm: Annotated[LLM, BeforeValidator(any_case)] = variable(
        "MEMLANE_LLM", "auto", section=Section.SAVES,
        doc="the LLM that draws facts from conversations: `auto` (an OpenAI-compatible endpoint when "
            "`MEMLANE_LLM_BASE_URL` or `OPENAI_API_KEY` is set, else none), `openai`, `bedrock` (AWS "
            "credentials), `off`")
    llm_base_url: str | None = variable(
        "MEMLANE_LLM_BASE_URL", None, section=Section.SAVES, takes="a URL",
        doc="an OpenAI-compatible server: Ollama `http://127.0.0.1:11434/v1`, LM Studio "
            "`http://127.0.0.1:1234/v1`, vLLM `http://host:8000/v1`")
    llm_model: str | None = variable(
        "MEMLANE_LLM_MODEL", None, section=Section.SAVES, shown="`gpt-4o-mini` (Bedrock: `amazon.nova-micro-v1:0`)",
        doc="the model the LLM runs")
    llm_api_key: str | None = variable(
        "MEMLANE_LLM_API_KEY", None, section=Section.SAVES, shown="`OPENAI_API_KEY`",
        doc="the LLM server's key, when it wants one (local servers take any)")
    llm_tokens_per_month: int = variable(
        "MEMLANE_LLM_TOKENS_PER_MONTH", DEFAULT_LLM_TOKENS_PER_MONTH, ge=0, unit="tokens", section=Section.SAVES,
        doc="input + output tokens an organization may spend on the LLM per UTC month; over it, extraction "
            "is refused with the reason (messages are still saved); 0 turns it off")

    # ------------------------------------------------------------------ serving
    allowed_origins: frozenset[str] = variable(
        ALLOWED_ORIGINS_ENV, frozenset(), section=Section.SERVER, flag="--allow-origin",
        takes="exact origins, separated by commas or spaces",
        doc="more browser origins `memlane serve` accepts, exactly (the flag repeats), such as the "
            "[browser extension](extension.md#let-memlane-accept-it)'s `chrome-extension://<id>` or "
            "`moz-extension://<uuid>`")
    mcp_max_output_chars: int = variable(
        ENV_MCP_MAX_OUTPUT_CHARS, DEFAULT_MCP_MAX_OUTPUT_CHARS, ge=MIN_MCP_OUTPUT_CHARS, unit="characters",
        section=Section.SERVER,
        doc="the most one MCP tool answer may hold; a longer answer is cut after the last whole result "
            "that fits, with a notice")

    # ------------------------------------------------------------------ not variables
    # Images (and scans) of up to this many pages are read by OCR in the request; longer ones, and
    # every recording, are read by the job that writes them (202).
    ocr_inline_pages: int = 4
    chunk_max_tokens: int = 512
    chunk_overlap_tokens: int = 50
    candidate_k: int = 50  # per search leg (spec §4: limit 50)
    max_chunks_per_document: int = 3
    # The user pool whose access tokens /mcp accepts (memlane.config.oauth); None: API keys only.
    oauth: OAuthSettings | None = None

    @field_validator("allowed_origins", mode="before")
    @classmethod
    def _origins(cls, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        try:
            return parse_origins([value], ALLOWED_ORIGINS_ENV)
        except InvalidInputError as exc:
            raise Refusal(exc.message.removeprefix(f"{exc.field}: ")) from None

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: Any) -> Self:
        """These settings and the OAuth part (memlane.config.oauth) from `env`, once, where a host
        starts; `overrides` (the command line's flags) win."""
        oauth = OAuthVariables.from_env(env).settings()
        return super().from_env(env, **{"oauth": oauth, **overrides})

    @property
    def llm_provider(self) -> Literal["openai", "bedrock"] | None:
        """The LLM this composition uses, or None (extraction is off)."""
        if self.llm == "auto":
            return "openai" if (self.llm_base_url or self.llm_api_key or self.openai_api_key) else None
        return None if self.llm == "off" else self.llm

    @property
    def fusion(self) -> FusionWeights:
        return dataclasses.replace(
            RECALL_FUSION, vector=self.weight_vector, text=self.weight_text, recency=self.weight_recency,
            code_text_evidence=self.fusion_code_text_evidence, complete_legs=self.fusion_complete_legs,
            identifier_words=self.index_identifier_words, text_reference=self.fusion_text_reference,
            text_coverage=self.fusion_text_coverage)

    @property
    def neighbours(self) -> NeighbourWeights:
        return dataclasses.replace(_NEIGHBOURS, weight=self.recall_neighbour_weight)

    @property
    def context(self) -> ContextWeights:
        return dataclasses.replace(_CONTEXT, sides=self.context_sides, text_weight=self.context_text_weight,
                                   vector=self.context_vector, vector_after=self.context_vector_sides == "both")
