"""The code workload of the recall suite (bench.eval.workloads.code): what is indexed has no
docstring, what is asked has no function name, and the sample is the same on every run."""

from __future__ import annotations

import ast
import textwrap

from bench.eval.workloads.abstention import nonsense_queries
from bench.eval.workloads.code import first_sentence, query_of, sample_functions, without_docstrings

SOURCE = textwrap.dedent('''
    import os


    def read_config(path):
        """Read the settings file at path. Returns a dict.

        More detail that is not asked.
        """
        # keep comments
        with open(path) as f:
            return f.read()


    class Store:
        """A store."""

        @property
        def size(self):
            """Return the number of items kept by the store."""
            def inner():
                """Nested docstrings go too."""
                return 1
            return inner()

        def stub(self):
            """Only a docstring: nothing to find."""

        def _private(self):
            """Private helpers are not asked about."""
            return 2


    def one_line(x): "Return the value of x doubled by one_line."; return x * 2


    def undocumented():
        return 3
''')


def _node(name):
    tree = ast.parse(SOURCE)
    return next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == name)


def test_every_docstring_inside_the_function_is_removed_and_the_rest_kept():
    lines = SOURCE.splitlines()
    code = without_docstrings(lines, _node("read_config"))
    assert code == "def read_config(path):\n    # keep comments\n    with open(path) as f:\n        return f.read()"
    size = without_docstrings(lines, _node("size"))
    assert size.startswith("@property\ndef size(self):")  # decorators stay, dedented
    assert '"""' not in size and "Nested docstrings" not in size and "return inner()" in size
    # a function that is only its docstring, or whose docstring shares a line with code, is left out
    assert without_docstrings(lines, _node("stub")) is None
    assert without_docstrings(lines, _node("one_line")) is None


def test_the_query_is_the_first_sentence_without_the_functions_name():
    assert first_sentence("Read the settings file.  Returns a dict.\n\nMore.") == "Read the settings file."
    assert first_sentence("Return the\n  number of items") == "Return the number of items"
    assert query_of("Call read_config() to read_config the file.", "read_config") == "Call to the file."
    # the name inside a longer identifier stays; after a dot it goes
    assert query_of("Like read_config_v2 and os.read_config.", "read_config") == "Like read_config_v2 and os. ."
    assert query_of("D.setdefault(k[,d]) -> D.get(k,d)", "setdefault") == "D. (k[,d]) -> D.get(k,d)"


def test_the_sample_is_seeded_public_documented_and_outside_the_tests(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text(SOURCE)
    (tmp_path / "test").mkdir()
    (tmp_path / "test" / "test_mod.py").write_text(SOURCE.replace("settings file", "test file"))
    functions = sample_functions(tmp_path, n=10, seed=1)
    assert [(f.path, f.qualname) for f in functions] == [("pkg/mod.py", "read_config"), ("pkg/mod.py", "Store.size")]
    assert functions[1].query == "Return the number of items kept by the store."
    assert functions[0].memory() == {"content": functions[0].code, "title": "pkg/mod.py: read_config",
                                     "content_type": "code"}
    assert functions[0].part in ("a", "b")
    for i in range(20):
        (tmp_path / "pkg" / f"m{i}.py").write_text(f'def f{i}():\n    """Compute the value number {i} of many."""\n    return {i}\n')
    first = sample_functions(tmp_path, n=5, seed=3)
    assert [f.qualname for f in first] == [f.qualname for f in sample_functions(tmp_path, n=5, seed=3)]
    assert len(first) == 5


def test_the_nonsense_queries_are_the_same_fifty_every_run():
    queries = nonsense_queries()
    assert len(queries) == 50 == len(set(queries))
    assert queries == nonsense_queries()
    assert nonsense_queries(seed=1) != queries
