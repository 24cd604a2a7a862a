"""The web app's security headers: one definition for the local server (memlane.local.webapp)
and for CloudFront (infra/constructs/webapp.py), so both serve the same policy.

Everything a memory holds is untrusted. The app never renders raw HTML, and this policy makes
sure nothing injected could run anyway: scripts only from the app's own files (no inline script,
no eval), Trusted Types required for every HTML sink, no plugins, no framing, no remote images
(a memory's `![](https://tracker/…)` cannot report that it was viewed), and requests only to the
app's own origin, where the API is served too.
"""

from __future__ import annotations

CONTENT_SECURITY_POLICY = "; ".join((
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "font-src 'self'",
    "connect-src 'self'",
    "manifest-src 'self'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "object-src 'none'",
    "require-trusted-types-for 'script'",
    "trusted-types 'none'",
))

REFERRER_POLICY = "no-referrer"  # a memory's link must not tell its site which memory linked it
PERMISSIONS_POLICY = "camera=(), microphone=(), geolocation=(), payment=(), usb=()"

SECURITY_HEADERS: dict[str, str] = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": REFERRER_POLICY,
    "Permissions-Policy": PERMISSIONS_POLICY,
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
}

# The app's client-side routes (fixed: the browser extension opens /memories/<id>). Every other
# path is left to the API.
APP_ROUTE_PATTERNS = (
    r"/",
    r"/login",
    r"/projects",
    r"/projects/[^/]+",
    r"/projects/[^/]+/settings",
    r"/search",
    r"/memories/[^/]+",
    r"/deletions/[^/]+",  # a deletion receipt (GET /v3/deletions/{id} is the API's)
    r"/connections/confirm",  # an OAuth flow coming back, confirmed by a member (memlane.connections.flow_binding)
    r"/graph",
    r"/settings",
)
