"""The one way memlane reads a JSON body it did not write: bounded in size, depth and numbers.

Python's json module recurses once per nesting level (a body nested 1,000 deep raises
RecursionError), turns a 5,000-digit integer into a ValueError (int's digit limit), reads 1e999 as
infinity and accepts NaN. Each of those used to reach a route as an unhandled error (a 500, or
uvicorn's plain-text one). Here each is an InvalidInputError naming what is wrong, which every
host maps to 400. Lone surrogates (\\ud800) are refused too: they are not text, and the first
store or response that encodes them as UTF-8 fails.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from memlane.domain.errors import InvalidInputError

MAX_JSON_BYTES = 10 * 1024 * 1024
# Deeper than any body memlane accepts (a memory's metadata, a JSON-RPC message, a connection's
# filter) by a wide margin, and far below the interpreter's recursion limit.
MAX_JSON_DEPTH = 64
# 40 digits hold any 128-bit integer and any millisecond timestamp; a float's text at most 64
# characters (a double needs 17 significant digits plus sign, point and exponent).
MAX_INTEGER_DIGITS = 40
MAX_FLOAT_CHARS = 64

_SURROGATE = re.compile("[\ud800-\udfff]")


class JsonBoundsError(InvalidInputError):
    """Well-formed JSON beyond memlane's bounds (size, depth, numbers, surrogates): always a 400
    naming the bound. Plain syntax errors are an InvalidInputError, so a route that words its own
    "not JSON" answer (Vidurai's "Invalid request format") keeps doing so."""


class _Refused(Exception):
    def __init__(self, problem: str) -> None:
        super().__init__(problem)
        self.problem = problem


def _integer(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > MAX_INTEGER_DIGITS:
        raise _Refused(f"an integer with {digits} digits (at most {MAX_INTEGER_DIGITS})")
    return int(text)


def _float(text: str) -> float:
    if len(text) > MAX_FLOAT_CHARS:
        raise _Refused(f"a number written with {len(text)} characters (at most {MAX_FLOAT_CHARS})")
    value = float(text)
    if not math.isfinite(value):
        raise _Refused(f"the number {text} is out of range")
    return value


def _constant(name: str) -> Any:
    raise _Refused(f"{name} is not JSON")


def _check_tree(value: Any, max_depth: int) -> None:
    """Depth and text of an already parsed value, without recursion."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item):
                raise _Refused("a string holds a lone UTF-16 surrogate, which is not text")
            continue
        if not isinstance(item, dict | list):
            continue
        if depth > max_depth:
            raise _Refused(f"nested deeper than {max_depth} levels")
        if isinstance(item, dict):
            for key, child in item.items():
                if _SURROGATE.search(key):
                    raise _Refused("a key holds a lone UTF-16 surrogate, which is not text")
                stack.append((child, depth + 1))
        else:
            stack.extend((child, depth + 1) for child in item)


def parse_json(text: str | bytes | bytearray, *, field: str = "body", max_bytes: int = MAX_JSON_BYTES,
               max_depth: int = MAX_JSON_DEPTH) -> Any:
    """Parse `text` as JSON within memlane's bounds: JsonBoundsError(field, which bound) when it is
    beyond them, InvalidInputError(field, ...) when it is not JSON at all."""
    size = len(text)
    if size > max_bytes:
        raise JsonBoundsError(field, f"{size} bytes of JSON exceed {max_bytes // (1024 * 1024) or max_bytes} "
                                       f"{'MB' if max_bytes >= 1024 * 1024 else 'bytes'}")
    try:
        value = json.loads(text, parse_int=_integer, parse_float=_float, parse_constant=_constant)
        _check_tree(value, max_depth)
    except _Refused as exc:
        raise JsonBoundsError(field, f"JSON refused: {exc.problem}") from None
    except RecursionError:
        raise JsonBoundsError(field, f"JSON refused: nested deeper than {max_depth} levels") from None
    except UnicodeDecodeError:
        raise InvalidInputError(field, "JSON must be UTF-8 text") from None
    except ValueError as exc:  # json.JSONDecodeError is a ValueError
        raise InvalidInputError(field, f"invalid JSON ({exc})") from None
    return value
