"""ImageReader with Amazon Textract (DetectDocumentText: synchronous, one page image per call).

Where it runs: in the API request for an image of a few pages (the save answers 201), and in the
ingestion workflow's Extract step for longer scans (one call per page inside that Lambda; a page
takes about a second, well inside the step's timeout for memlane's 300-page cap). Every format is
sent as PNG (memlane.ingest.media normalises GIF, WebP and TIFF frames, which Textract's
synchronous API does not all take), at most 10 MB a page.

IAM: textract:DetectDocumentText, which has no resource-level permissions (the grant is on `*`,
acknowledged in the stack with that reason).
"""

from __future__ import annotations

from typing import Any

from botocore.exceptions import ClientError

from memlane.adapters.aws._boto import error_code, is_transient, lazy_client
from memlane.domain.errors import DependencyUnavailableError, InvalidInputError

# Textract's errors about the image itself: the client's to fix, not worth a retry.
_BAD_IMAGE = frozenset({"InvalidParameterException", "UnsupportedDocumentException", "BadDocumentException",
                        "DocumentTooLargeException"})
_TRANSIENT = frozenset({"ProvisionedThroughputExceededException", "ThrottlingException",
                        "InternalServerError", "LimitExceededException"})


class TextractReader:
    def __init__(self, client: Any | None = None) -> None:
        self.client = lazy_client(client, "textract")

    @property
    def id(self) -> str:
        return "textract"

    def read_text(self, png: bytes) -> str:
        if not png:
            return ""
        try:
            response = self.client.detect_document_text(Document={"Bytes": png})
        except ClientError as exc:
            code = error_code(exc)
            if code in _BAD_IMAGE:
                raise InvalidInputError("content", f"Amazon Textract cannot read this image ({code})") from exc
            if code in _TRANSIENT or is_transient(exc):
                raise DependencyUnavailableError(f"Amazon Textract unavailable: {code}") from exc
            raise
        return lines_of(response.get("Blocks", []))


def lines_of(blocks: list[dict[str, Any]]) -> str:
    """The LINE blocks' text in reading order (Textract lists them top to bottom per page)."""
    return "\n".join(str(b.get("Text", "")) for b in blocks if b.get("BlockType") == "LINE")
