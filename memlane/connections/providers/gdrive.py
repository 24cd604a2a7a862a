"""Google Drive (https://developers.google.com/drive/api/reference/rest/v3): Docs as text, Sheets
as tables, PDFs through memlane's PDF extractor, and plain text, markdown and CSV files.

First sync: the start page token of the changes feed is taken *before* listing every file
(`GET /drive/v3/files`), so nothing changed during the listing is missed. After that only the
changes feed is read (`GET /drive/v3/changes?pageToken=…`), one page at a time, each page's
`nextPageToken` (at the end `newStartPageToken`) becoming the cursor once the page is applied. A
change that says `removed` or a file in the trash deletes the item.

Content: Docs are exported as `text/plain`, Sheets as `text/csv` (Drive exports the first sheet)
and turned into a markdown table, other files are downloaded (`alt=media`).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from datetime import datetime
from typing import Any, ClassVar

import httpx

from memlane.connections.errors import ProviderItemError, ProviderRateLimited
from memlane.connections.oauth import OAuthSpec, retry_after_seconds
from memlane.connections.providers.base import Batch, ProviderDefaults
from memlane.connections.session import ProviderSession
from memlane.domain.connections import Connection, Item, ItemRef, Provider, TokenSet
from memlane.domain.errors import InvalidInputError
from memlane.domain.models import ContentType

DOC = "application/vnd.google-apps.document"
SHEET = "application/vnd.google-apps.spreadsheet"
PDF = "application/pdf"
DOWNLOADED = {"text/plain": ContentType.TEXT, "text/markdown": ContentType.MARKDOWN, "text/csv": ContentType.MARKDOWN,
              PDF: ContentType.PDF}
SUPPORTED = {DOC, SHEET, *DOWNLOADED}
FILE_FIELDS = "id,name,mimeType,modifiedTime,version,webViewLink,trashed,parents,size"
PAGE_SIZE = 100
MAX_SHEET_ROWS = 5000
MAX_DOWNLOAD_BYTES = 20 * 1024 * 1024
RATE_LIMIT_REASONS = {"rateLimitExceeded", "userRateLimitExceeded"}


def file_id(drive_id: str) -> str:
    return f"file:{drive_id}"


def csv_to_markdown(text: str) -> str:
    rows = [row for row in csv.reader(io.StringIO(text))][:MAX_SHEET_ROWS + 1]
    rows = [r for r in rows if any(c.strip() for c in r)]
    if not rows:
        return ""
    width = max(len(r) for r in rows)

    def line(cells: list[str]) -> str:
        cells = [c.replace("|", "\\|").replace("\n", " ").strip() for c in cells] + [""] * (width - len(cells))
        return "| " + " | ".join(cells) + " |"

    return "\n".join([line(rows[0]), "| " + " | ".join(["---"] * width) + " |", *(line(r) for r in rows[1:])]) + "\n"


class GoogleDriveProvider(ProviderDefaults):
    name: ClassVar[Provider] = Provider.GOOGLE_DRIVE
    api_url: ClassVar[str] = "https://www.googleapis.com"
    relists_everything: ClassVar[bool] = False
    oauth: ClassVar[OAuthSpec | None] = OAuthSpec(
        authorize_url="https://accounts.google.com/o/oauth2/v2/auth",
        token_url="https://oauth2.googleapis.com/token",
        scopes=("https://www.googleapis.com/auth/drive.readonly",),
        client_auth="body",
        # A refresh token is issued only for offline access, and again only with consent.
        authorize_params={"access_type": "offline", "prompt": "consent", "include_granted_scopes": "true"},
    )

    def validate_options(self, options: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        folder = options.get("folder_id")
        if folder is not None:
            if not isinstance(folder, str) or not folder.strip() or len(folder) > 200:
                raise InvalidInputError("options.folder_id", "must be a Drive folder id")
            out["folder_id"] = folder.strip()
        unknown = set(options) - {"folder_id"}
        if unknown:
            raise InvalidInputError(f"options.{sorted(unknown)[0]}", "is not an option of google_drive connections")
        return out

    def label(self, options: dict[str, Any], account: str | None) -> str:
        return f"Google Drive: {account}" if account else "Google Drive"

    def session_headers(self) -> dict[str, str]:
        return {"Accept": "application/json"}

    def classify(self, response: httpx.Response, now: datetime) -> Exception | None:
        if response.status_code == 403:
            try:
                reasons = {e.get("reason") for e in response.json().get("error", {}).get("errors", [])}
            except (ValueError, AttributeError):
                return None
            if reasons & RATE_LIMIT_REASONS:
                return ProviderRateLimited("google drive: rate limit exceeded",
                                           retry_after_seconds(response, now, default=30.0))
        return None

    def identify(self, session: ProviderSession, tokens: TokenSet) -> str | None:
        about = session.get_json("/drive/v3/about", params={"fields": "user"})
        return (about.get("user") or {}).get("emailAddress")

    # ------------------------------------------------------------------ listing

    def _wanted(self, conn: Connection, f: dict[str, Any]) -> bool:
        if f.get("trashed") or f.get("mimeType") not in SUPPORTED:
            return False
        folder = conn.options.get("folder_id")
        return folder is None or folder in (f.get("parents") or [])

    def _ref(self, f: dict[str, Any]) -> ItemRef:
        return ItemRef(external_id=file_id(f["id"]), version=f"{f.get('version', '')}:{f.get('modifiedTime', '')}",
                       hint={"file": f})

    def scan(self, session: ProviderSession, conn: Connection) -> Iterator[Batch]:
        token = conn.cursor.get("page_token")
        if token is None:
            yield from self._first_sync(session, conn)
            return
        while True:
            page = session.get_json("/drive/v3/changes", params={
                "pageToken": token, "pageSize": PAGE_SIZE, "includeRemoved": "true",
                "fields": f"nextPageToken,newStartPageToken,changes(fileId,removed,file({FILE_FIELDS}))"})
            upserts: list[ItemRef] = []
            deletes: list[str] = []
            for change in page.get("changes") or []:
                f = change.get("file") or {}
                if change.get("removed") or f.get("trashed"):
                    deletes.append(file_id(change["fileId"]))
                elif self._wanted(conn, f):
                    upserts.append(self._ref(f))
                else:
                    deletes.append(file_id(change["fileId"]))  # moved out of scope: forgotten if it was known
            token = page.get("nextPageToken") or page.get("newStartPageToken")
            yield Batch(upserts=upserts, deletes=deletes, cursor={"page_token": token} if token else None)
            if not page.get("nextPageToken"):
                return

    def _first_sync(self, session: ProviderSession, conn: Connection) -> Iterator[Batch]:
        start = session.get_json("/drive/v3/changes/startPageToken")["startPageToken"]
        present: set[str] = set()
        params: dict[str, Any] = {"q": "trashed = false", "pageSize": PAGE_SIZE,
                                  "fields": f"nextPageToken,files({FILE_FIELDS})"}
        while True:
            page = session.get_json("/drive/v3/files", params=params)
            refs = [self._ref(f) for f in page.get("files") or [] if self._wanted(conn, f)]
            present.update(r.external_id for r in refs)
            yield Batch(upserts=refs)
            if not page.get("nextPageToken"):
                break
            params = {**params, "pageToken": page["nextPageToken"]}
        yield Batch(reconcile=("file:", present), cursor={"page_token": start})

    # ------------------------------------------------------------------ reading a file

    def fetch(self, session: ProviderSession, conn: Connection, ref: ItemRef) -> Item | None:
        drive_id = ref.external_id[len("file:"):]
        f = ref.hint.get("file")
        if f is None:
            try:
                f = session.get_json(f"/drive/v3/files/{drive_id}", params={"fields": FILE_FIELDS})
            except ProviderItemError as exc:
                if exc.gone:
                    return None
                raise
        if not self._wanted(conn, f):
            return None
        mime = f["mimeType"]
        content: str | bytes
        if mime == DOC:
            content, kind = self._download(session, f"/drive/v3/files/{drive_id}/export",
                                           {"mimeType": "text/plain"}).decode("utf-8-sig"), ContentType.TEXT
        elif mime == SHEET:
            raw = self._download(session, f"/drive/v3/files/{drive_id}/export", {"mimeType": "text/csv"})
            content, kind = f"# {f.get('name', '')}\n\n" + csv_to_markdown(raw.decode("utf-8-sig")), ContentType.MARKDOWN
        else:
            raw = self._download(session, f"/drive/v3/files/{drive_id}", {"alt": "media"})
            kind = DOWNLOADED[mime]
            if kind == ContentType.PDF:
                content = raw
            elif mime == "text/csv":
                content = f"# {f.get('name', '')}\n\n" + csv_to_markdown(raw.decode("utf-8-sig", errors="replace"))
            else:
                content = raw.decode("utf-8-sig", errors="replace")
        if isinstance(content, str) and not content.strip():
            return None
        return Item(
            external_id=ref.external_id,
            version=f"{f.get('version', '')}:{f.get('modifiedTime', '')}",
            title=(f.get("name") or "Untitled")[:500],
            content=content,
            content_type=kind,
            source_url=f.get("webViewLink"),
            metadata={"drive_id": drive_id, "mime_type": mime, "modified_time": f.get("modifiedTime")},
            tags=["google-drive", {DOC: "doc", SHEET: "sheet", PDF: "pdf"}.get(mime, "file")],
        )

    def _download(self, session: ProviderSession, path: str, params: dict[str, str]) -> bytes:
        response = session.request("GET", path, params=params)
        if len(response.content) > MAX_DOWNLOAD_BYTES:
            raise ProviderItemError(f"google drive: {path} is over {MAX_DOWNLOAD_BYTES} bytes")
        return response.content
