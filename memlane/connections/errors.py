"""What a provider's API can answer besides content, as types the sync decides on."""

from __future__ import annotations

from memlane.domain.errors import MemlaneError, TransientError


class ProviderRateLimited(TransientError):  # noqa: N818 - named for what the provider said
    """429 (or GitHub's 403 with no requests left): stop, keep the cursor, come back after
    `retry_after_s`."""

    def __init__(self, message: str, retry_after_s: float) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class ProviderUnavailable(TransientError):  # noqa: N818
    """5xx or a dropped connection: stop, keep the cursor, back off."""


class ProviderAuthError(MemlaneError):
    """The provider refused the token and a refresh did not help (revoked, expired refresh token):
    the user must connect again."""


class ProviderItemError(MemlaneError):
    """One item could not be read (a 4xx other than auth and rate limits, content that cannot be
    decoded): that item is retried later, the others go on. `status` is the HTTP status when
    the provider gave one (404 and 410 mean the item is gone)."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status

    @property
    def gone(self) -> bool:
        return self.status in (404, 410)


class OAuthError(MemlaneError):
    """The authorization server refused a code or a refresh (its `error` and description)."""
