"""The provider adapters, by name. Each is a small adapter over the provider's documented REST API
(httpx through a ProviderSession), except `git`, which reads a local clone with the git CLI."""

from __future__ import annotations

from memlane.connections.providers.base import Batch, ProviderAdapter
from memlane.domain.connections import Provider
from memlane.domain.errors import InvalidInputError


def _registry() -> dict[Provider, ProviderAdapter]:
    from memlane.connections.providers.gdrive import GoogleDriveProvider
    from memlane.connections.providers.git_local import LocalGitProvider
    from memlane.connections.providers.github import GitHubProvider
    from memlane.connections.providers.notion import NotionProvider
    from memlane.connections.providers.slack import SlackProvider
    from memlane.connections.providers.x import XProvider

    adapters: list[ProviderAdapter] = [GitHubProvider(), NotionProvider(), GoogleDriveProvider(), SlackProvider(),
                                       XProvider(), LocalGitProvider()]
    return {a.name: a for a in adapters}


_REGISTRY: dict[Provider, ProviderAdapter] | None = None


def adapter_for(provider: Provider | str) -> ProviderAdapter:
    global _REGISTRY
    if _REGISTRY is None:
        _REGISTRY = _registry()
    try:
        return _REGISTRY[Provider(provider)]
    except ValueError as exc:
        raise InvalidInputError("provider", f"unknown provider {provider!r}") from exc


__all__ = ["Batch", "ProviderAdapter", "adapter_for"]
