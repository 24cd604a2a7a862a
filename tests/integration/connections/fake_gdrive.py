"""Google Drive's API v3 on loopback, from https://developers.google.com/drive/api/reference/rest/v3:
`changes.getStartPageToken`, `changes.list` (pageToken → nextPageToken … newStartPageToken,
`removed`, trashed files), `files.list`, `files.get` (metadata, `alt=media`), `files.export`
(Docs as text/plain, Sheets as text/csv), `about.get`; Google's rate-limit 403 with reason
`userRateLimitExceeded`; the OAuth endpoint with PKCE and `access_type=offline`."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from fake_provider import FakeProvider, Reply, Request, json_reply

DOC = "application/vnd.google-apps.document"
SHEET = "application/vnd.google-apps.spreadsheet"
FOLDER = "application/vnd.google-apps.folder"


def tiny_pdf(line: str) -> bytes:
    """A valid one-page PDF showing one line of Helvetica text."""
    stream = b"BT /F1 12 Tf 72 720 Td (" + line.encode("latin-1") + b") Tj ET"
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
               b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> >> "
               b"/Contents 5 0 R >>",
               b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
               b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream"]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for i, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % i + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


@dataclass
class DriveFile:
    id: str
    name: str
    mime: str
    content: bytes
    version: int = 1
    modified: str = ""
    trashed: bool = False
    parents: tuple[str, ...] = ("root",)


class FakeDrive(FakeProvider):
    token_ttl_s = 3600  # Google access tokens last an hour
    rotate_refresh_tokens = False  # Google keeps the refresh token; a refresh answer leaves it out
    client_auth = "body"
    page_size_cap = 2

    def __init__(self) -> None:
        self.files: dict[str, DriveFile] = {}
        self.changes: list[dict[str, Any]] = []
        self._ids = itertools.count(1)
        self._tick = datetime(2025, 5, 1, tzinfo=UTC)
        super().__init__()

    def reset_data(self) -> None:
        self.files.clear()
        self.changes.clear()
        self.reset()

    def _stamp(self) -> str:
        self._tick += timedelta(seconds=7)
        return self._tick.isoformat().replace("+00:00", "Z")

    def _changed(self, f: DriveFile, removed: bool = False) -> None:
        self.changes.append({"fileId": f.id, "removed": removed, "file": None if removed else self._file_json(f)})

    def add(self, name: str, mime: str, content: bytes, parents: tuple[str, ...] = ("root",)) -> DriveFile:
        f = DriveFile(f"f{next(self._ids)}", name, mime, content, modified=self._stamp(), parents=parents)
        self.files[f.id] = f
        self._changed(f)
        return f

    def update(self, f: DriveFile, content: bytes) -> None:
        f.content, f.version, f.modified = content, f.version + 1, self._stamp()
        self._changed(f)

    def trash(self, f: DriveFile) -> None:
        f.trashed, f.version, f.modified = True, f.version + 1, self._stamp()
        self._changed(f)

    def delete_forever(self, f: DriveFile) -> None:
        del self.files[f.id]
        self._changed(f, removed=True)

    # ------------------------------------------------------------------ API

    def setup_routes(self) -> None:
        self.route("GET", r"/drive/v3/about", lambda r: json_reply({"user": {"emailAddress": "ana@acme.test"}}))
        self.route("GET", r"/drive/v3/changes/startPageToken",
                   lambda r: json_reply({"kind": "drive#startPageToken", "startPageToken": str(len(self.changes) + 1)}))
        self.route("GET", r"/drive/v3/changes", self.list_changes)
        self.route("GET", r"/drive/v3/files", self.list_files)
        self.route("GET", r"/drive/v3/files/(?P<id>[^/]+)", self.get_file)
        self.route("GET", r"/drive/v3/files/(?P<id>[^/]+)/export", self.export)

    def _file_json(self, f: DriveFile) -> dict[str, Any]:
        return {"kind": "drive#file", "id": f.id, "name": f.name, "mimeType": f.mime, "modifiedTime": f.modified,
                "version": str(f.version), "trashed": f.trashed, "parents": list(f.parents),
                "webViewLink": f"https://drive.google.com/file/d/{f.id}/view", "size": str(len(f.content))}

    def list_changes(self, request: Request) -> Reply:
        start = int(request.arg("pageToken") or 0)
        size = min(int(request.arg("pageSize", "100")), self.page_size_cap)
        chunk = self.changes[start - 1 : start - 1 + size]
        out: dict[str, Any] = {"kind": "drive#changeList",
                               "changes": [{k: v for k, v in c.items() if v is not None} for c in chunk]}
        if start - 1 + size < len(self.changes):
            out["nextPageToken"] = str(start + size)
        else:
            out["newStartPageToken"] = str(len(self.changes) + 1)
        return json_reply(out)

    def list_files(self, request: Request) -> Reply:
        files = [f for f in self.files.values() if not ("trashed = false" in (request.arg("q") or "") and f.trashed)]
        start = int(request.arg("pageToken") or 0)
        size = min(int(request.arg("pageSize", "100")), self.page_size_cap)
        out: dict[str, Any] = {"files": [self._file_json(f) for f in files[start : start + size]]}
        if start + size < len(files):
            out["nextPageToken"] = str(start + size)
        return json_reply(out)

    def get_file(self, request: Request) -> Reply:
        f = self.files.get(request.match["id"])
        if f is None:
            return json_reply({"error": {"code": 404, "message": "File not found"}}, 404)
        if request.arg("alt") == "media":
            if f.mime.startswith("application/vnd.google-apps"):
                return json_reply({"error": {"code": 403, "errors": [{"reason": "fileNotDownloadable"}]}}, 403)
            return Reply(200, f.content, {"Content-Type": f.mime})
        return json_reply(self._file_json(f))

    def export(self, request: Request) -> Reply:
        f = self.files.get(request.match["id"])
        if f is None:
            return json_reply({"error": {"code": 404}}, 404)
        wanted = {DOC: "text/plain", SHEET: "text/csv"}.get(f.mime)
        if wanted != request.arg("mimeType"):
            return json_reply({"error": {"code": 400, "errors": [{"reason": "badRequest"}]}}, 400)
        return Reply(200, f.content, {"Content-Type": wanted})
