"""The local host's part of the configuration, and everything it reads when `memlane` starts
(`LocalConfiguration`: the CLI, `memlane serve` and `memlane mcp` read it once, in
memlane.cli.main, and hand each part to what it composes)."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from memlane.config.apps import ConnectionApps
from memlane.config.client import ClientSettings
from memlane.config.docsets import DocsetSettings
from memlane.config.settings import Settings
from memlane.config.variables import Section, SettingsPart, variable

ENV_ORG = "MEMLANE_ORG"
ENV_ALLOW_PRIVATE_NETWORK = "MEMLANE_ALLOW_PRIVATE_NETWORK"


class LocalSettings(SettingsPart):
    """What only a host on this machine reads: the organization it acts as, the crawler's network,
    the web app it serves, where the local model's export is kept and which languages OCR reads."""

    org: str | None = variable(
        ENV_ORG, None, section=Section.WHERE, flag="--org", takes="an organization's slug",
        shown="the first key's organization (`default`)",
        doc="the organization that `memlane mcp` and the CLI's local commands act as; created when new")
    allow_private_network: bool = variable(
        ENV_ALLOW_PRIVATE_NETWORK, False, section=Section.SERVER, flag="--allow-private-network",
        doc="on: the crawler may fetch loopback and private addresses, for a documentation site on your "
            "machine or network (link-local and cloud metadata addresses stay refused)")
    web_dir: Path | None = variable(
        "MEMLANE_WEB_DIR", None, section=Section.SERVER, shown="`web/dist` of the checkout",
        doc="the built web app the local server serves")
    model_cache: Path | None = variable(
        "MEMLANE_MODEL_CACHE", None, section=Section.MODELS,
        shown="`$XDG_CACHE_HOME/memlane/models` or `~/.cache/memlane/models`",
        doc="where the local model's ONNX export is kept: made once per machine from the packaged weights "
            "(about half a minute); an unwritable cache only means exporting in each process")
    cache_home: Path | None = variable(
        "XDG_CACHE_HOME", None, section=Section.MODELS, shown="`~/.cache`",
        doc="the XDG base directory of caches: the model cache is its `memlane/models` unless "
            "`MEMLANE_MODEL_CACHE` names another")
    ocr_languages: str = variable(
        "MEMLANE_OCR_LANGUAGES", "eng", section=Section.MODELS, takes="Tesseract language codes joined by +",
        doc="Tesseract's languages for OCR on this machine, e.g. `eng+deu` (install the matching "
            "`tesseract-ocr-*` Debian packages)")

    @property
    def models_dir(self) -> Path:
        """Where the local model's export is kept (memlane.adapters.local.minilm_onnx)."""
        if self.model_cache is not None:
            return self.model_cache.expanduser()
        return (self.cache_home or Path.home() / ".cache") / "memlane" / "models"


class LocalConfiguration(SettingsPart):
    """Every part a host on this machine reads, once, when `memlane` starts."""

    settings: Settings = Field(default_factory=Settings)
    local: LocalSettings = Field(default_factory=LocalSettings)
    docsets: DocsetSettings = Field(default_factory=DocsetSettings)
    apps: ConnectionApps = Field(default_factory=ConnectionApps)
    client: ClientSettings = Field(default_factory=ClientSettings)

    def with_data_dir(self, data_dir: Path | None) -> LocalConfiguration:
        """These parts, with `--data-dir` winning over MEMLANE_DATA_DIR."""
        if data_dir is None:
            return self
        return self.model_copy(update={"settings": self.settings.model_copy(update={"data_dir": data_dir})})
