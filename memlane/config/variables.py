"""How a variable of memlane's configuration is declared and read (memlane.config says which parts
there are and who reads them).

A part of the configuration is a `SettingsPart`, pydantic-settings' `BaseSettings`. A field that an
environment variable sets declares it with `variable(...)`: the name, the default, what it means and
the section of docs/configuration.md it belongs to, with pydantic's constraints (`ge=0`, a
`Literal`) saying what it takes. A part whose model_config names an `env_prefix` is a family: each
of its fields is the variable prefix + FIELD (the connection providers' OAuth apps). A field that
is itself a part is read with its parent (`LocalConfiguration` holds the local host's parts).

`Part.from_env(env)` reads a part once, where a host starts. Each declared variable is looked up
by its name: the environment is never copied in one sweep, so the AWS environment test
(tests/infra) sees which variables each function reads. A blank value counts as unset. A value the
field cannot take is a ConfigurationError naming the variable, its value and what it takes:

    MEMLANE_CONTEXT_VECTOR='yes please': expected on or off (1, true, yes, on / 0, false, no, off)

Constructing a part (`Settings(data_dir=...)`, as tests and benchmarks do) reads nothing: only
`from_env` looks at the environment.
"""

from __future__ import annotations

import dataclasses
import os
import types
from collections.abc import Mapping
from contextvars import ContextVar
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal, Self, Union, get_args, get_origin

import annotated_types
from pydantic import AliasChoices, Field, ValidationError
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from memlane.domain.errors import ConfigurationError

SWITCH = "on or off"
SWITCH_SPELLINGS = "1, true, yes, on / 0, false, no, off"


class Section(StrEnum):
    """The sections of docs/configuration.md, in their order there (memlane.config.reference writes
    each section's introduction)."""

    WHERE = "Where, and as whom"
    MODELS = "Embeddings and models"
    RANKING = "Ranking"
    SAVES = "Saves, media and the LLM"
    SERVER = "The local server"
    DOCSETS = "Documentation sets"
    CONNECTIONS = "Connections"
    STACK = "Set by the AWS stack"


class Refusal(ValueError):
    """A validator's own reason for refusing a value (said instead of what the field takes)."""


def variable(name: str | tuple[str, ...], default: Any = PydanticUndefined, *, doc: str, section: Section,
             shown: str | None = None, unit: str | None = None, takes: str | None = None,
             flag: str | None = None, **field: Any) -> Any:
    """A field set by the variable `name` (or the first of several names that is set). `shown`: the
    default as the page says it, when the value is the machine's own (a home directory); `unit`:
    what a number counts; `takes`: what the value is, when the type does not say it; `flag`: the
    command-line option that wins over it. `field`: pydantic's Field arguments (constraints,
    default_factory)."""
    alias = name if isinstance(name, str) else AliasChoices(*name)
    extra = {"section": section.value, "shown": shown, "unit": unit, "takes": takes, "flag": flag}
    return Field(default, validation_alias=alias, description=doc,
                 json_schema_extra={k: v for k, v in extra.items() if v is not None}, **field)


def about(field: FieldInfo, key: str) -> str | None:
    """What `variable` recorded of a field: section, shown, unit, takes, flag."""
    extra = field.json_schema_extra
    value = extra.get(key) if isinstance(extra, dict) else None
    return None if value is None else str(value)


def variables_of(part: type[BaseSettings], name: str) -> tuple[str, ...]:
    """The variables that set field `name` of `part`, in the order they are looked up."""
    field = part.model_fields[name]
    alias = field.validation_alias
    if isinstance(alias, str):
        return (alias,)
    if isinstance(alias, AliasChoices):
        return tuple(choice for choice in alias.choices if isinstance(choice, str))
    prefix = part.model_config.get("env_prefix") or ""
    return (f"{prefix}{name.upper()}",) if prefix else ()


def nested_part(field: FieldInfo) -> type[SettingsPart] | None:
    annotation = field.annotation
    return annotation if isinstance(annotation, type) and issubclass(annotation, SettingsPart) else None


@dataclasses.dataclass
class _Reading:
    """The part `from_env` is reading, from which environment, and where each field's value came
    from (for refusals)."""

    part: type[BaseSettings]
    env: Mapping[str, str]
    read_from: dict[str, tuple[str, str]] = dataclasses.field(default_factory=dict)  # field -> (variable, value)


_reading: ContextVar[_Reading | None] = ContextVar("memlane_config_reading", default=None)


class DeclaredVariables(PydanticBaseSettingsSource):
    """pydantic-settings' source of a part's values while `from_env` reads it: each declared
    variable looked up by name in the environment being read, a nested part read from the same one."""

    def __init__(self, settings_cls: type[BaseSettings], reading: _Reading) -> None:
        super().__init__(settings_cls)
        self.reading = reading

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        key, raw = self._found(field_name) or (field_name, None)
        return raw, key, False

    def _found(self, name: str) -> tuple[str, str] | None:
        for key in variables_of(self.settings_cls, name):
            raw = (self.reading.env.get(key) or "").strip()
            if raw:
                return key, raw
        return None

    def __call__(self) -> dict[str, Any]:
        values: dict[str, Any] = {}
        for name, info in self.settings_cls.model_fields.items():
            part = nested_part(info)
            if part is not None:
                values[name] = part.from_env(self.reading.env)
            elif (found := self._found(name)) is not None:
                self.reading.read_from[name] = found
                values[name] = found[1]
        return values


class SettingsPart(BaseSettings):
    """A part of memlane's configuration (see the module's docstring)."""

    model_config = SettingsConfigDict(validate_by_name=True, validate_by_alias=True, allow_inf_nan=False,
                                      extra="forbid")

    @classmethod
    def settings_customise_sources(cls, settings_cls: type[BaseSettings], init_settings: PydanticBaseSettingsSource,
                                   env_settings: PydanticBaseSettingsSource,
                                   dotenv_settings: PydanticBaseSettingsSource,
                                   file_secret_settings: PydanticBaseSettingsSource,
                                   ) -> tuple[PydanticBaseSettingsSource, ...]:
        """The values given, then (only for the part `from_env` is reading) the declared variables:
        constructing a part reads nothing."""
        reading = _reading.get()
        if reading is None or reading.part is not settings_cls:
            return (init_settings,)
        return init_settings, DeclaredVariables(settings_cls, reading)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: Any) -> Self:
        """This part from `env` (os.environ when None), once, where a host starts. `overrides` (a
        command line's flags) win over the environment; None means not given."""
        reading = _Reading(cls, os.environ if env is None else env)
        token = _reading.set(reading)
        try:
            return cls(**{k: v for k, v in overrides.items() if v is not None})
        except ValidationError as exc:
            raise refusal(cls, exc, reading.read_from) from None
        finally:
            _reading.reset(token)


def refusal(part: type[BaseSettings], exc: ValidationError,
            read_from: Mapping[str, tuple[str, str]]) -> ConfigurationError:
    """The first error of `exc` as a ConfigurationError naming the variable (`read_from`: the one
    each field's value came from, and the value), the value and what the variable takes."""
    error = exc.errors()[0]
    key = str(error["loc"][0]) if error.get("loc") else ""
    name = next((n for n in part.model_fields if n == key or key in variables_of(part, n)), key)
    field = part.model_fields.get(name)
    named = variables_of(part, name) if field is not None else ()
    variable, raw = read_from.get(name) or (named[0] if named else name, error.get("input"))
    if error["type"] == "missing":
        return ConfigurationError(variable, f"{variable} is not set: {field.description if field else 'required'}")
    reason = (error.get("ctx") or {}).get("error")
    said = str(reason) if isinstance(reason, Refusal) else _expected(field) if field else error["msg"]
    return ConfigurationError(variable, f"{variable}={raw!r}: {said}")


def _expected(field: FieldInfo) -> str:
    what = takes(field)
    return f"expected {what} ({SWITCH_SPELLINGS})" if what == SWITCH else f"expected {what}"


def takes(field: FieldInfo) -> str:
    """What a field's variable takes, in words: its kind, unit and bounds."""
    kind = about(field, "takes") or _kind(field.annotation)
    unit = about(field, "unit")
    bounds = [_bound(m) for m in field.metadata]
    return ", ".join([kind + (f" of {unit}" if unit else ""), *(b for b in bounds if b)])


def _kind(annotation: Any) -> str:
    if get_origin(annotation) in (Union, types.UnionType):
        (annotation, *_) = [a for a in get_args(annotation) if a is not type(None)]
    if get_origin(annotation) is Literal:
        choices = [str(c) for c in get_args(annotation)]
        return f"{', '.join(choices[:-1])} or {choices[-1]}"
    kinds = {bool: SWITCH, int: "a whole number", float: "a number", Path: "a path", str: "text"}
    return kinds.get(annotation, "a value")


def _bound(constraint: Any) -> str | None:
    words = {annotated_types.Ge: ("ge", "at least"), annotated_types.Gt: ("gt", "more than"),
             annotated_types.Le: ("le", "at most"), annotated_types.Lt: ("lt", "less than")}
    attribute, phrase = words.get(type(constraint), (None, None))
    if attribute is None:
        return None
    value = getattr(constraint, attribute)
    return f"{phrase} {int(value) if float(value).is_integer() else value}"


def any_case(value: Any) -> Any:
    """A `Literal` of words from text in any case: 'OFF' is 'off'."""
    return value.strip().lower() if isinstance(value, str) else value


def whole_number_choice(value: Any) -> Any:
    """A `Literal` of whole numbers from text: '256' is 256 (pydantic compares literals strictly)."""
    return int(value) if isinstance(value, str) and value.strip().isdigit() else value
