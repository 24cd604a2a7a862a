"""The one model of memlane's configuration: every part, each a SettingsPart whose fields declare
the variables that set them (memlane.config.variables). No host reads the whole: each reads the
parts it runs, once, where it starts (memlane.config says which). docs/configuration.md is written
from this model (memlane.config.reference), so every variable it declares is on the page."""

from __future__ import annotations

from pydantic import BaseModel

from memlane.config.apps import ConnectionApps
from memlane.config.aws import AwsSettings, FunctionSettings
from memlane.config.client import ClientSettings
from memlane.config.docsets import DocsetSettings
from memlane.config.local import LocalSettings
from memlane.config.oauth import OAuthVariables
from memlane.config.settings import Settings


class Configuration(BaseModel):
    """The parts, in the order the page presents their variables within a section."""

    settings: Settings  # every host
    local: LocalSettings  # a host on this machine
    client: ClientSettings  # the CLI and `memlane mcp`: a server to go through instead
    docsets: DocsetSettings  # hosts that crawl and rank documentation
    apps: ConnectionApps  # a host on this machine: the connection providers' OAuth apps
    oauth: OAuthVariables  # the API and the authorizer function (through Settings, or alone)
    function: FunctionSettings  # every Lambda function, when its handler module is imported
    aws: AwsSettings  # every Lambda function's composition
