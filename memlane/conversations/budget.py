"""The monthly LLM token budget per organization, and the one way memlane calls the LLM (`ask`).

Every call is counted: input and output tokens in the metrics (memlane.observability.LLM_*) and
against the organization's budget for the UTC month (Settings.llm_tokens_per_month; 0: no limit),
kept in the cache port like the media budget (SQLite here, DynamoDB with a TTL on AWS). Once the
month's tokens are spent, LLM work is refused with LLMBudgetSpent, whose message says the budget and
when it resets; messages are still saved. Like the media budget it is a brake, not a bill: two
workers charging at the same moment can lose an increment.
"""

from __future__ import annotations

from datetime import UTC, datetime

from pydantic import ValidationError

from memlane import observability
from memlane.conversations.prompts import A, Prompt
from memlane.domain.errors import LLMBudgetSpent, LLMOutputError, MemlaneError
from memlane.ports import Completion, Services

_KEEP_SECONDS = 62 * 24 * 3600


def month_key(org_id: str, now: datetime) -> str:
    return f"llm-tokens:{org_id}:{now.astimezone(UTC):%Y-%m}"


def next_month(now: datetime) -> datetime:
    t = now.astimezone(UTC)
    return datetime(t.year + (t.month == 12), t.month % 12 + 1, 1, tzinfo=UTC)


def spent(svc: Services, org_id: str) -> int:
    if svc.cache is None:
        return 0
    raw = svc.cache.get(month_key(org_id, svc.clock.now()), svc.clock.now())
    try:
        return int(raw.decode()) if raw else 0
    except ValueError:
        return 0


def charge(svc: Services, org_id: str, tokens: int) -> None:
    if svc.cache is None or tokens <= 0:
        return
    now = svc.clock.now()
    svc.cache.set(month_key(org_id, now), str(spent(svc, org_id) + tokens).encode(), _KEEP_SECONDS, now)


def refusal(svc: Services, org_id: str) -> LLMBudgetSpent | None:
    """The error to refuse LLM work with when this month's tokens are spent, else None."""
    limit = svc.settings.llm_tokens_per_month
    if limit <= 0:
        return None
    used = spent(svc, org_id)
    if used < limit:
        return None
    return LLMBudgetSpent(f"the organization's LLM token budget for this month is spent ({used:,} of {limit:,} "
                          f"tokens; MEMLANE_LLM_TOKENS_PER_MONTH); it resets on "
                          f"{next_month(svc.clock.now()):%Y-%m-%d} 00:00 UTC")


def ask(svc: Services, org_id: str, prompt: Prompt[A], data: object) -> tuple[A, Completion]:
    """One structured question to the LLM, schema-checked. An answer that is not JSON or does not
    match the prompt's schema is asked once more, then refused (LLMOutputError); a transient
    failure has already been retried by the adapter (TransientError)."""
    if svc.llm is None:
        raise MemlaneError("no LLM is configured")
    last: Exception | None = None
    for _ in range(2):
        if (refused := refusal(svc, org_id)) is not None:
            raise refused
        svc.metrics.count(observability.LLM_CALLS)
        try:
            completion = svc.llm.model.complete_json(task=prompt.task, system=prompt.system, user=prompt.user(data),
                                               schema=prompt.schema, max_tokens=prompt.max_tokens)
        except LLMOutputError as exc:  # an unusable answer still cost its tokens
            svc.metrics.count(observability.LLM_MALFORMED)
            charge(svc, org_id, exc.tokens)
            last = exc
            continue
        svc.metrics.count(observability.LLM_INPUT_TOKENS, completion.input_tokens)
        svc.metrics.count(observability.LLM_OUTPUT_TOKENS, completion.output_tokens)
        charge(svc, org_id, completion.tokens)
        try:
            return prompt.answer.model_validate(completion.data), completion
        except ValidationError as exc:
            svc.metrics.count(observability.LLM_MALFORMED)
            last = exc
    detail = last.message if isinstance(last, MemlaneError) else f"{len(getattr(last, 'errors', list)())} schema errors"
    raise LLMOutputError(f"LLM {prompt.task}: the answer did not match its schema twice ({detail})")
