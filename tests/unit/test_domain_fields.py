"""The one not-blank validator (memlane.domain.fields) and the one default rate limit."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, Field, ValidationError

from memlane.domain.fields import NonBlankStr, OptionalTrimmedNonBlankStr, TrimmedNonBlankStr
from memlane.domain.limits import DEFAULT_RATE_LIMIT_PER_MINUTE
from memlane.domain.models import ApiKey


class _Model(BaseModel):
    kept: NonBlankStr = Field(default="x", min_length=1, max_length=5)
    trimmed: TrimmedNonBlankStr = Field(default="x", max_length=8)
    patch: OptionalTrimmedNonBlankStr = Field(default=None, min_length=1, max_length=5)


def _errors(**fields: object) -> list[tuple[str, str]]:
    with pytest.raises(ValidationError) as info:
        _Model(**fields)
    return [(".".join(map(str, e["loc"])), e["type"]) for e in info.value.errors()]


def test_a_blank_string_is_refused_with_the_words_the_api_answers():
    # Given whitespace only, When validated, Then a value error says "must not be empty"
    with pytest.raises(ValidationError) as info:
        _Model(kept="   ")
    [error] = info.value.errors()
    assert error["type"] == "value_error" and str(error["ctx"]["error"]) == "must not be empty"


def test_kept_strings_are_not_trimmed_and_trimmed_ones_are():
    model = _Model(kept=" a ", trimmed="  docs ", patch=" p ")
    assert (model.kept, model.trimmed, model.patch) == (" a ", "docs", "p")


def test_length_limits_are_checked_before_blankness_and_none_passes_an_optional_field():
    assert _errors(kept="") == [("kept", "string_too_short")]
    assert _errors(kept=" " * 9) == [("kept", "string_too_long")]
    assert _errors(patch="") == [("patch", "string_too_short")]
    assert _errors(patch=" " * 9) == [("patch", "string_too_long")]
    assert _errors(patch="  ") == [("patch", "value_error")]
    assert _Model(patch=None).patch is None


def test_a_new_key_gets_the_one_default_rate_limit():
    assert ApiKey.model_fields["rate_limit_per_minute"].default == DEFAULT_RATE_LIMIT_PER_MINUTE == 100
