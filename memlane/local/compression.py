"""The local server's answers compressed (gzip) when the client accepts it: the web app's JavaScript,
CSS and HTML and the API's JSON, past a size where it pays (a memory page's Markdown bundle is
361 KB as built, about a third of that gzipped).

gzip from the standard library: every browser and HTTP client accepts it, and it needs no
dependency (brotli would save some 15% more on the bundles, for a native package).

Never compressed: small answers, answers that are already encoded, and answers marked
`Cache-Control: no-store` (a sign-in code's key, a new API key): a secret next to text an attacker
can choose is what compression-length attacks read (BREACH); such answers are small anyway.

Files of the web app's build are compressed once per file version (`GatewayResponse.cache_key`)
and kept: the build's hashed assets never change, and the rest change only with a new build.
"""

from __future__ import annotations

import gzip
import threading
from collections import OrderedDict

from memlane.local.responses import GatewayResponse

MIN_BYTES = 1024  # below this a gzip header and a round of work save nothing worth having
LEVEL = 6  # zlib's default: most of level 9's gain at a fraction of its time
CACHED_FILES = 64  # compressed build files kept (a build has a few dozen)
TEXT_TYPES = ("text/", "application/javascript", "application/json", "application/manifest+json",
              "application/xml", "image/svg+xml")


def accepts_gzip(accept_encoding: str | None) -> bool:
    """Whether `Accept-Encoding` allows gzip (`gzip`, `*`, with a q-value above 0)."""
    allowed = False
    for item in (accept_encoding or "").split(","):
        name, _, params = item.strip().partition(";")
        q = _q_value(params)
        if name.strip().lower() == "gzip":
            return q > 0
        if name.strip() == "*":
            allowed = q > 0
    return allowed


def _q_value(params: str) -> float:
    for param in params.split(";"):
        key, _, value = param.strip().partition("=")
        if key.strip().lower() == "q":
            try:
                return float(value)
            except ValueError:
                return 0.0
    return 1.0


def compressible(response: GatewayResponse) -> bool:
    headers = {k.lower(): v for k, v in response.headers.items()}
    content_type = headers.get("content-type", "").split(";")[0].strip().lower()
    return (content_type.startswith(TEXT_TYPES) or content_type.endswith("+json")) \
        and "content-encoding" not in headers and "no-store" not in headers.get("cache-control", "").lower()


class Compressor:
    def __init__(self, cached_files: int = CACHED_FILES) -> None:
        self._cache: OrderedDict[str, bytes] = OrderedDict()
        self._limit = cached_files
        self._lock = threading.Lock()

    def __call__(self, response: GatewayResponse, accept_encoding: str | None) -> GatewayResponse:
        """The response as the client should get it: gzipped when that is allowed and worth it, and
        always saying that the answer depends on Accept-Encoding when it could have been."""
        if not compressible(response):
            return response
        headers = {k: v for k, v in response.headers.items() if k.lower() != "vary"}
        headers["Vary"] = _vary(response.headers)
        if len(response.body) < MIN_BYTES or not accepts_gzip(accept_encoding):
            return GatewayResponse(response.status, headers, response.body, response.cache_key)
        body = self._gzip(response.body, response.cache_key)
        return GatewayResponse(response.status, {**headers, "Content-Encoding": "gzip"}, body, response.cache_key)

    def _gzip(self, body: bytes, key: str | None) -> bytes:
        if key is not None:
            with self._lock:
                if (hit := self._cache.get(key)) is not None:
                    self._cache.move_to_end(key)
                    return hit
        # mtime=0: the same bytes give the same answer (no timestamp in the header)
        packed = gzip.compress(body, compresslevel=LEVEL, mtime=0)
        if key is not None:
            with self._lock:
                self._cache[key] = packed
                while len(self._cache) > self._limit:
                    self._cache.popitem(last=False)
        return packed


def _vary(headers: dict[str, str]) -> str:
    present = next((v for k, v in headers.items() if k.lower() == "vary"), "")
    names = [n.strip() for n in present.split(",") if n.strip()]
    if not any(n.lower() == "accept-encoding" for n in names):
        names.append("Accept-Encoding")
    return ", ".join(names)
