"""The one language table (memlane.ingest.languages), shared by extraction, chunking and summaries."""

from __future__ import annotations

import pytest

from memlane.ingest.chunking import find_code_units
from memlane.ingest.languages import DISPLAY_NAMES, detect_language, file_extension, normalize_language


@pytest.mark.parametrize(
    ("alias", "language"),
    [("py", "python"), ("Python3", "python"), ("js", "javascript"), ("tsx", "typescript"),
     ("golang", "go"), ("c++", "cpp"), ("C#", "csharp"), ("shell", "bash"), ("rust", "rust")],
)
def test_every_alias_has_one_spelling(alias, language):
    assert normalize_language(alias) == language


def test_the_chunker_reads_a_language_by_the_same_table():
    # Given Python code named by an alias only the extraction table used to know
    code = "def first():\n    return 1\n\n\nclass Second:\n    pass\n"
    # Then the code units are found with Python's patterns
    assert [(u.name, u.kind) for u in find_code_units(code, "python3")] == [("first", "function"), ("Second", "class")]


def test_detection_by_file_name_shebang_and_content():
    assert file_extension("src/app.TS") == "ts"
    assert detect_language("x = 1", title="src/app.ts") == "typescript"
    assert detect_language("#!/usr/bin/env python3\nprint('hi')\n") == "python"
    assert detect_language("package main\n\nfunc main() {\n\tfmt.Println(1)\n}\n") == "go"
    assert DISPLAY_NAMES["cpp"] == "C++"
