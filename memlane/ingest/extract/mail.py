"""Email: an RFC 822 message's body (plain text, else HTML), with sender, date and subject."""

from __future__ import annotations

import email
import email.policy
import email.utils
import re
from email.message import EmailMessage
from typing import Any

from memlane.domain.models import ContentType
from memlane.ingest.extract.html import html_to_markdown
from memlane.ingest.extract.result import Extracted
from memlane.ingest.extract.text import derived_title, extract_plain, first_line_title, normalize_whitespace

_HEADER_LINE = re.compile(r"^[A-Za-z][A-Za-z0-9-]*:[ \t]")


def extract_email(
    raw: str, content_type: ContentType, title: str | None, source_url: str | None
) -> Extracted:
    message = _parse_email(raw)
    if message is None:
        return extract_plain(raw, content_type, title, source_url)
    subject = " ".join(str(message.get("subject", "")).split())
    metadata: dict[str, Any] = {}
    if message.get("from"):
        metadata["author"] = " ".join(str(message["from"]).split())
    if message.get("date"):
        metadata["date"] = _iso_date(str(message["date"]))
    if subject:
        metadata["subject"] = subject

    text = ""
    part = message.get_body(preferencelist=("plain", "html"))
    if part is not None:
        try:
            content = part.get_content()
        except (LookupError, ValueError):  # an unknown or lying charset: decode what we can
            payload = part.get_payload(decode=True)
            content = payload.decode("utf-8", errors="replace") if isinstance(payload, bytes) else ""
        if isinstance(content, bytes):
            content = content.decode("utf-8", errors="replace")
        if part.get_content_subtype() == "html":
            text, _ = html_to_markdown(content)
        else:
            text = normalize_whitespace(content)
    if not text.strip():
        text = subject
    return Extracted(
        text=text,
        content_type=content_type,
        title=(derived_title(subject) if subject else None) or first_line_title(text),
        title_from_heading=bool(subject),
        metadata=metadata,
    )


def _parse_email(raw: str) -> EmailMessage | None:
    """The message, when `raw` starts with an RFC 822 header block naming a sender or subject."""
    first_line = raw.lstrip("\r\n").split("\n", 1)[0]
    if not _HEADER_LINE.match(first_line):
        return None
    message = email.message_from_string(raw.lstrip("\r\n"), policy=email.policy.default)
    if not isinstance(message, EmailMessage) or not (message.get("from") or message.get("subject")):
        return None
    return message


def _iso_date(value: str) -> str:
    try:
        return email.utils.parsedate_to_datetime(value).isoformat()
    except (TypeError, ValueError, IndexError):
        return value.strip()
