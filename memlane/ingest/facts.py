"""What makes a sentence worth keeping in a summary: dates, times, numbers, amounts, durations,
key–value lines ("Notice period: three months") and names. Pure regular expressions, no model.

Used by the extractive summarizer (memlane.ingest.summarize) to prefer the sentences a person
would look a note up for, and by bench/nlp.py to count which of them a summary kept.
"""

from __future__ import annotations

import re

import regex

_MONTHS = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
           r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)")
_WEEKDAYS = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_NUMBER_WORDS = (r"(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|"
                 r"forty|fifty|hundred|thousand|million|billion|half|dozen)")
_UNITS = r"(?:seconds?|minutes?|hours?|days?|weeks?|months?|years?|decades?)"

DATE = re.compile(
    rf"\b(?:\d{{1,2}}(?:st|nd|rd|th)?\s+{_MONTHS}\.?,?\s+\d{{4}}"  # 14 March 2027
    rf"|{_MONTHS}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?"  # March 14, 2027 / March 14
    rf"|\d{{1,2}}(?:st|nd|rd|th)?\s+{_MONTHS}\b"  # 14 March
    rf"|{_MONTHS}\s+\d{{4}}"  # March 2027
    r"|\d{4}-\d{2}-\d{2}|\d{1,2}[/.]\d{1,2}[/.]\d{2,4}"  # 2027-03-14, 14/03/2027
    rf"|(?:last|next|this|every)\s+(?:{_WEEKDAYS}|week|weekend|month|year|summer|winter|spring|fall|autumn)"
    rf"|{_WEEKDAYS}|yesterday|tomorrow|today|tonight"
    r"|(?:19|20)\d{2})\b",
    re.IGNORECASE,
)
TIME = re.compile(r"\b\d{1,2}(?::\d{2})\s*(?:[ap]\.?m\.?)?|\b\d{1,2}\s*[ap]\.?m\.?\b", re.IGNORECASE)
NUMBER = re.compile(
    rf"[$€£¥]\s?\d[\d,.]*|\b\d[\d,.]*\s?(?:%|percent|k|m|eur|usd|gbp|chf|kg|km|mb|gb|ms)?\b"
    rf"|\b{_NUMBER_WORDS}(?:[\s-]+{_NUMBER_WORDS})*\s+{_UNITS}\b|\b{_NUMBER_WORDS}\b",
    re.IGNORECASE,
)
# Letters of any script ("Ökostrom: …", "Weserstraße" is one word): the `regex` module's classes.
KEY_VALUE = regex.compile(r"^\s*\p{L}[\w ()/'’&-]{0,40}:\s+\S")
_NAME = regex.compile(r"(?<=[\p{Ll},;][ \t])\p{Lu}[\p{Ll}\p{M}]+(?:\s+\p{Lu}[\p{Ll}\p{M}]+)*")


def fact_spans(text: str) -> list[str]:
    """The dates, times and numbers a text states, in order (each once)."""
    found: dict[str, None] = {}
    for pattern in (DATE, TIME, NUMBER):
        for match in pattern.finditer(text):
            value = match.group().strip(" ,.")
            if value:
                found.setdefault(value, None)
    return list(found)


def has_fact(sentence: str) -> bool:
    return bool(DATE.search(sentence) or TIME.search(sentence) or NUMBER.search(sentence))


def has_name(sentence: str) -> bool:
    """A capitalised word that does not open the sentence: a person, a place, a product."""
    return bool(_NAME.search(sentence))


def is_key_value(line: str) -> bool:
    return bool(KEY_VALUE.match(line))
