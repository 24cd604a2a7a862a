"""The connection providers' OAuth apps on a local host: a family of variables per provider,
MEMLANE_<PROVIDER>_CLIENT_ID and _CLIENT_SECRET, with _AUTH_URL, _TOKEN_URL and _API_URL for a
provider's own server (GitHub Enterprise Server). memlane.connections.apps turns them into the OAuth
clients connections use; on AWS they live in one Secrets Manager secret instead (MEMLANE_CONNECTIONS_SECRET)."""

from __future__ import annotations

from typing import Any

from pydantic import Field
from pydantic_settings import SettingsConfigDict

from memlane.config.variables import Section, SettingsPart
from memlane.domain.connections import Provider


def _field(doc: str, takes: str = "text") -> Any:
    return Field(None, description=doc, json_schema_extra={"section": Section.CONNECTIONS.value, "takes": takes})


class ProviderApp(SettingsPart):
    """The OAuth app registered with one provider ([Connections](connections.md#setting-up-the-providers)):
    its variables are the family's prefix + the field's name."""

    model_config = SettingsConfigDict(frozen=True)

    client_id: str | None = _field("the app's client id")
    client_secret: str | None = _field("the app's client secret")
    auth_url: str | None = _field("the provider's authorization endpoint, for its own server", "a URL")
    token_url: str | None = _field("the provider's token endpoint, for its own server", "a URL")
    api_url: str | None = _field("the provider's API, for its own server (GitHub Enterprise Server)", "a URL")


class GitHubApp(ProviderApp):
    """GitHub's"""

    model_config = SettingsConfigDict(env_prefix="MEMLANE_GITHUB_")


class NotionApp(ProviderApp):
    """Notion's"""

    model_config = SettingsConfigDict(env_prefix="MEMLANE_NOTION_")


class GoogleDriveApp(ProviderApp):
    """Google Drive's"""

    model_config = SettingsConfigDict(env_prefix="MEMLANE_GOOGLE_")


class SlackApp(ProviderApp):
    """Slack's"""

    model_config = SettingsConfigDict(env_prefix="MEMLANE_SLACK_")


class XApp(ProviderApp):
    """X's"""

    model_config = SettingsConfigDict(env_prefix="MEMLANE_X_")


class ConnectionApps(SettingsPart):
    """Every provider's OAuth app, read together where a local host composes its connections."""

    model_config = SettingsConfigDict(frozen=True)

    github: GitHubApp = Field(default_factory=GitHubApp)
    notion: NotionApp = Field(default_factory=NotionApp)
    google_drive: GoogleDriveApp = Field(default_factory=GoogleDriveApp)
    slack: SlackApp = Field(default_factory=SlackApp)
    x: XApp = Field(default_factory=XApp)

    def by_provider(self) -> dict[str, ProviderApp]:
        """Each provider's app by the provider's name (memlane.domain.connections.Provider)."""
        return {Provider.GITHUB.value: self.github, Provider.NOTION.value: self.notion,
                Provider.GOOGLE_DRIVE.value: self.google_drive, Provider.SLACK.value: self.slack,
                Provider.X.value: self.x}
