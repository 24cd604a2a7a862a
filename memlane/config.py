"""Settings, read once at the edge (CLI, server, Lambda entry points) and passed inward.

`Settings.from_env` is the one place the library reads its MEMLANE_* variables (the hosts in
cli/, local/ and adapters/aws/compose.py read their own: data directory, ports, AWS resources).
Nothing below reads os.environ during a request: a route, a tool or a service takes what it
needs from `Services.settings` or from an argument its host passes. A value memlane cannot use
is a ConfigurationError naming the variable, raised when the host starts, not in a request.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, ValidationError

from memlane.domain.errors import ConfigurationError, InvalidInputError
from memlane.domain.oauth import ENV_PUBLIC_URL, OAuthSettings
from memlane.domain.origins import ALLOWED_ORIGINS_ENV, parse_origins
from memlane.domain.tuning import ContextWeights, FusionWeights, NeighbourWeights

DEFAULT_PORT = 7432
ContextSides = Literal["none", "before", "both"]
ENV_MCP_MAX_OUTPUT_CHARS = "MEMLANE_MCP_MAX_OUTPUT_CHARS"
DEFAULT_MCP_MAX_OUTPUT_CHARS = 25_000  # what one MCP tool answer may put into the assistant's context
MIN_MCP_OUTPUT_CHARS = 1000


def env_int(env: Mapping[str, str], name: str, default: int, *, minimum: int | None = None,
            what: str = "a whole number") -> int:
    """`name` from `env` as an int (`default` when unset or blank); a ConfigurationError naming it
    otherwise."""
    raw = (env.get(name) or "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ConfigurationError(name, f"{name}={raw!r}: expected {what}") from None
    if minimum is not None and value < minimum:
        raise ConfigurationError(name, f"{name}={raw!r}: expected {what}, at least {minimum}")
    return value


def env_float(env: Mapping[str, str], name: str, default: float) -> float:
    raw = (env.get(name) or "").strip()
    if not raw:
        return default
    try:
        return float(raw)
    except ValueError:
        raise ConfigurationError(name, f"{name}={raw!r}: expected a number") from None


def default_data_dir() -> Path:
    return Path(os.environ.get("MEMLANE_DATA_DIR") or Path.home() / ".memlane")


class Settings(BaseModel):
    data_dir: Path = Field(default_factory=default_data_dir)
    # Saves up to this size are processed in the request (201); larger ones are queued (202).
    inline_max_chars: int = 20_000
    # Images (and scans) of up to this many pages are read by OCR in the request; longer ones, and
    # every recording, are read by the job that writes them (202).
    ocr_inline_pages: int = 4
    # Media work per organization and UTC day (memlane.documents.media_budget): engine seconds of
    # OCR and of transcription here, Textract pages and Transcribe minutes on AWS. Work over the
    # budget waits for the next day (never fails for it); 0 turns that budget off.
    media_ocr_seconds_per_day: float = 3600.0
    media_transcribe_seconds_per_day: float = 3600.0
    media_textract_pages_per_day: float = 1000.0
    media_transcribe_minutes_per_day: float = 600.0
    chunk_max_tokens: int = 512
    chunk_overlap_tokens: int = 50
    candidate_k: int = 50  # per search leg (spec §4: limit 50)
    max_chunks_per_document: int = 3
    weight_vector: float = 0.6
    weight_text: float = 0.4
    weight_recency: float = 0.1
    # A code chunk's text share by its own BM25 evidence, not over the batch maximum
    # (memlane.domain.tuning.FusionWeights.code_text_evidence); MEMLANE_FUSION_CODE_TEXT_EVIDENCE=0
    # gives the spec's formula for code too.
    fusion_code_text_evidence: bool = True
    # Each leg scores the other's candidates (memlane.domain.tuning.FusionWeights.complete_legs);
    # MEMLANE_FUSION_COMPLETE_LEGS=0 gives each leg's own top k only, as before.
    fusion_complete_legs: bool = True
    # The text share's divisor: the batch's best BM25, never less than this per query word
    # (memlane.domain.tuning.FusionWeights.text_reference): 5, the BM25 per query word at which
    # relevance's text part reaches 1 − 1/e (memlane.recall.relevance, bm25_scale); 0 gives the spec's
    # batch maximum alone (MEMLANE_FUSION_TEXT_REFERENCE).
    fusion_text_reference: float = 5.0
    # Identifier words (memlane.ingest.identifiers): a code chunk is indexed for the text leg with the
    # words of its identifiers (`getUserName` → get user name), and a query naming an identifier also
    # searches for its words. Off by default: on the recall suite it moved code MRR@10 +0.004 but lost
    # one of 300 code questions at the default floor (BENCHMARKS.md). MEMLANE_INDEX_IDENTIFIER_WORDS=1;
    # chunks indexed before the switch get (or lose) the words with `memlane reindex`.
    index_identifier_words: bool = False
    # Recall's neighbouring-messages stage (memlane.recall.neighbours): a message of a conversation
    # gains this share of the fused score of the best message next to it there; 0 turns it off.
    recall_neighbour_weight: float = 0.3
    recall_neighbour_max_gap_seconds: float = 1800.0  # unused since the conversation signal; still read
    # Contextual indexing (memlane.documents.contextual): a short message's index entry carries the
    # messages just before (and after: "both") it in its conversation, as a text field of this
    # weight (0: none) and mixed into its vector.
    context_sides: ContextSides = "both"
    context_text_weight: float = 0.5
    context_vector: bool = True
    context_vector_sides: Literal["before", "both"] = "both"
    openai_api_key: str | None = None
    embedder: str = "auto"  # auto | local | openai
    # Word pieces the local embedder reads of each text (memlane.adapters.local.embedder).
    embedder_window: Literal[128, 256] = 256
    # MEMLANE_PUBLIC_URL: the URL clients reach this API at, no trailing slash ("": derived from
    # the request's gateway domain or Host; the deployed stack sets it, tokens are bound to it).
    public_url: str = ""
    # MEMLANE_ALLOWED_ORIGINS: exact browser origins beyond the built-in list (memlane.domain.origins).
    allowed_origins: frozenset[str] = frozenset()
    # MEMLANE_MCP_MAX_OUTPUT_CHARS: what one MCP tool answer may hold.
    mcp_max_output_chars: int = Field(default=DEFAULT_MCP_MAX_OUTPUT_CHARS, ge=MIN_MCP_OUTPUT_CHARS)
    # The LLM that extracts facts from conversations (memlane.conversations): MEMLANE_LLM
    # auto | off | openai | bedrock. auto: an OpenAI-compatible endpoint when MEMLANE_LLM_BASE_URL or
    # OPENAI_API_KEY is set, else none (messages are saved, no fact is extracted, answers say so).
    llm: Literal["auto", "off", "openai", "bedrock"] = "auto"
    llm_base_url: str | None = None  # MEMLANE_LLM_BASE_URL, e.g. http://127.0.0.1:11434/v1 (Ollama)
    llm_model: str | None = None  # MEMLANE_LLM_MODEL; default gpt-4o-mini (OpenAI), Nova Micro (Bedrock)
    llm_api_key: str | None = None  # MEMLANE_LLM_API_KEY; default OPENAI_API_KEY; local servers take any
    # MEMLANE_LLM_TOKENS_PER_MONTH: input + output tokens an organization may spend a UTC month; 0: no limit.
    llm_tokens_per_month: int = Field(default=10_000_000, ge=0)
    # MEMLANE_OAUTH_*: the user pool whose access tokens /mcp accepts; None: API keys only.
    oauth: OAuthSettings | None = None

    @property
    def llm_provider(self) -> Literal["openai", "bedrock"] | None:
        """The LLM this composition uses, or None (extraction is off)."""
        if self.llm == "auto":
            return "openai" if (self.llm_base_url or self.llm_api_key or self.openai_api_key) else None
        return None if self.llm == "off" else self.llm

    @property
    def fusion(self) -> FusionWeights:
        return FusionWeights(vector=self.weight_vector, text=self.weight_text, recency=self.weight_recency,
                             code_text_evidence=self.fusion_code_text_evidence,
                             complete_legs=self.fusion_complete_legs,
                             identifier_words=self.index_identifier_words,
                             text_reference=self.fusion_text_reference)

    @property
    def neighbours(self) -> NeighbourWeights:
        return NeighbourWeights(
            weight=self.recall_neighbour_weight, max_gap_seconds=self.recall_neighbour_max_gap_seconds
        )

    @property
    def context(self) -> ContextWeights:
        return ContextWeights(
            sides=self.context_sides,
            text_weight=self.context_text_weight,
            vector=self.context_vector,
            vector_after=self.context_vector_sides == "both",
            max_gap_seconds=self.recall_neighbour_max_gap_seconds,
        )

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides) -> Settings:
        """From the environment (`env`, else os.environ), once, at the edge. `overrides` (the
        CLI's flags) win; a value memlane cannot use is a ConfigurationError naming its variable."""
        env = os.environ if env is None else env
        values: dict = {}
        numbers = (
            ("weight_vector", "MEMLANE_WEIGHT_VECTOR"),
            ("weight_text", "MEMLANE_WEIGHT_TEXT"),
            ("weight_recency", "MEMLANE_WEIGHT_RECENCY"),
            ("fusion_text_reference", "MEMLANE_FUSION_TEXT_REFERENCE"),
            ("recall_neighbour_weight", "MEMLANE_RECALL_NEIGHBOUR_WEIGHT"),
            ("recall_neighbour_max_gap_seconds", "MEMLANE_RECALL_NEIGHBOUR_MAX_GAP_SECONDS"),
            ("context_text_weight", "MEMLANE_CONTEXT_TEXT_WEIGHT"),
            ("media_ocr_seconds_per_day", "MEMLANE_MEDIA_OCR_SECONDS_PER_DAY"),
            ("media_transcribe_seconds_per_day", "MEMLANE_MEDIA_TRANSCRIBE_SECONDS_PER_DAY"),
            ("media_textract_pages_per_day", "MEMLANE_MEDIA_TEXTRACT_PAGES_PER_DAY"),
            ("media_transcribe_minutes_per_day", "MEMLANE_MEDIA_TRANSCRIBE_MINUTES_PER_DAY"),
        )
        for name, key in numbers:
            if env.get(key):
                values[name] = env_float(env, key, 0.0)
        # which variable a field comes from, to name it when the model refuses a value
        variables = {"inline_max_chars": "MEMLANE_INLINE_MAX_CHARS", "context_sides": "MEMLANE_CONTEXT_SIDES",
                     "context_vector_sides": "MEMLANE_CONTEXT_VECTOR_SIDES", "embedder": "MEMLANE_EMBEDDER",
                     "embedder_window": "MEMLANE_EMBEDDER_WINDOW", "llm": "MEMLANE_LLM", **dict(numbers)}
        if env.get("MEMLANE_CONTEXT_SIDES"):
            values["context_sides"] = env["MEMLANE_CONTEXT_SIDES"]
        if env.get("MEMLANE_CONTEXT_VECTOR_SIDES"):
            values["context_vector_sides"] = env["MEMLANE_CONTEXT_VECTOR_SIDES"]
        if env.get("MEMLANE_FUSION_CODE_TEXT_EVIDENCE"):
            values["fusion_code_text_evidence"] = (
                env["MEMLANE_FUSION_CODE_TEXT_EVIDENCE"].lower() not in ("0", "false", "no", "off"))
        if env.get("MEMLANE_FUSION_COMPLETE_LEGS"):
            values["fusion_complete_legs"] = (
                env["MEMLANE_FUSION_COMPLETE_LEGS"].lower() not in ("0", "false", "no", "off"))
        if env.get("MEMLANE_INDEX_IDENTIFIER_WORDS"):
            values["index_identifier_words"] = (
                env["MEMLANE_INDEX_IDENTIFIER_WORDS"].lower() not in ("0", "false", "no", "off"))
        if env.get("MEMLANE_CONTEXT_VECTOR"):
            values["context_vector"] = env["MEMLANE_CONTEXT_VECTOR"].lower() not in ("0", "false", "no", "off")
        if env.get("MEMLANE_INLINE_MAX_CHARS"):
            values["inline_max_chars"] = env_int(env, "MEMLANE_INLINE_MAX_CHARS", 0, minimum=0,
                                                 what="a whole number of characters")
        if env.get("OPENAI_API_KEY"):
            values["openai_api_key"] = env["OPENAI_API_KEY"]
        if env.get("MEMLANE_EMBEDDER"):
            values["embedder"] = env["MEMLANE_EMBEDDER"]
        if env.get("MEMLANE_EMBEDDER_WINDOW"):
            values["embedder_window"] = env_int(env, "MEMLANE_EMBEDDER_WINDOW", 256, what="128 or 256")
        if env.get("MEMLANE_LLM"):
            values["llm"] = env["MEMLANE_LLM"].strip().lower()
        for name, key in (("llm_base_url", "MEMLANE_LLM_BASE_URL"), ("llm_model", "MEMLANE_LLM_MODEL"),
                          ("llm_api_key", "MEMLANE_LLM_API_KEY")):
            if (env.get(key) or "").strip():
                values[name] = env[key].strip()
        values["llm_tokens_per_month"] = env_int(env, "MEMLANE_LLM_TOKENS_PER_MONTH", 10_000_000, minimum=0,
                                                 what="a whole number of tokens")
        values["public_url"] = (env.get(ENV_PUBLIC_URL) or "").strip().rstrip("/")
        try:
            values["allowed_origins"] = parse_origins([env.get(ALLOWED_ORIGINS_ENV, "")], ALLOWED_ORIGINS_ENV)
        except InvalidInputError as exc:
            raise ConfigurationError(ALLOWED_ORIGINS_ENV, exc.message) from None
        values["mcp_max_output_chars"] = env_int(
            env, ENV_MCP_MAX_OUTPUT_CHARS, DEFAULT_MCP_MAX_OUTPUT_CHARS, minimum=MIN_MCP_OUTPUT_CHARS,
            what="a whole number of characters")
        values["oauth"] = OAuthSettings.from_env(env)
        values.update({k: v for k, v in overrides.items() if v is not None})
        try:
            return cls(**values)
        except ValidationError as exc:
            # e.g. MEMLANE_CONTEXT_SIDES=after: name the variable, not the field
            first = exc.errors()[0]
            field = str(first["loc"][0]) if first.get("loc") else ""
            variable = variables.get(field, field)
            raise ConfigurationError(variable, f"{variable}={env.get(variable, values.get(field))!r}: "
                                               f"{first['msg']}") from None
