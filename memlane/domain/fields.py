"""Field types shared by the request models of every layer.

A string of only whitespace is refused with "must not be empty", the words a 400 names the field
with (`content: must not be empty`). Length limits stay on the field (`Field(min_length=1,
max_length=...)`) and are checked first.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator

BLANK_MESSAGE = "must not be empty"


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError(BLANK_MESSAGE)
    return value


def _trimmed_not_blank(value: str) -> str:
    return _not_blank(value).strip()


def _none_or_trimmed_not_blank(value: str | None) -> str | None:
    return value if value is None else _trimmed_not_blank(value)


# Kept as sent (content, a query).
NonBlankStr = Annotated[str, AfterValidator(_not_blank)]
# Surrounding whitespace dropped (a name, a title, a collection): "  docs " is stored as "docs".
TrimmedNonBlankStr = Annotated[str, AfterValidator(_trimmed_not_blank)]
# The same for an optional field (a PATCH): None passes; the validator wraps the whole union so a
# string's length limits are still checked before its blankness.
OptionalTrimmedNonBlankStr = Annotated[str | None, AfterValidator(_none_or_trimmed_not_blank)]
