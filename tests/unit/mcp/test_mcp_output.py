"""What every MCP answer goes through: the output cap (whole results, a notice, quoting intact) and
the tool list's annotations."""

from __future__ import annotations

import pytest

from memlane.config import Settings
from memlane.domain.errors import ConfigurationError
from memlane.mcp.definitions import BEHAVIOUR, TOOL_NAMES, tool_list
from memlane.mcp.formatting import RESULT_SEPARATOR, limit_output, quote
from memlane.mcp.server import tool_result
from memlane.mcp.tools import ToolOutput


def results(n: int, size: int) -> str:
    parts = [f"[{i}] \"note {i}\"\n{quote('x' * size)}" for i in range(1, n + 1)]
    return "Found some memories.\n\n" + RESULT_SEPARATOR.join(parts)


def test_short_answers_are_untouched() -> None:
    text = results(2, 100)
    assert limit_output(text, 1000) == text


def test_a_long_answer_keeps_whole_results_and_says_what_was_left_out() -> None:
    # Given five results of ~2,000 characters and a 5,000-character limit
    text = results(5, 2000)
    out = limit_output(text, 5000)
    # Then it is within the limit and ends after a whole result, with the notice on its own line
    assert len(out) <= 5000
    head, notice = out.rsplit("\n\n", 1)
    assert head.endswith("x") and head.count(RESULT_SEPARATOR) == 1  # results 1 and 2, whole
    assert notice == (f"[Output cut to stay within 5,000 characters: the last {len(text) - len(head):,} characters "
                      "were left out; 2 of 5 results are shown in full. Ask for fewer results or a narrower "
                      "query to see the rest.]")


def test_one_huge_result_is_cut_at_a_line_so_every_shown_line_stays_quoted() -> None:
    text = "Project context.\n\n" + quote("\n".join(f"line {i} of a very long memory" for i in range(2000)),
                                         limit=100_000)
    out = limit_output(text, 3000)
    head, notice = out.rsplit("\n\n", 1)
    assert len(out) <= 3000
    assert all(line.startswith("> ") for line in head.splitlines()[2:])
    assert notice.startswith("[Output cut to stay within 3,000 characters") and "shown in full" not in notice


def test_the_structured_copy_is_only_sent_while_it_fits() -> None:
    small = tool_result(ToolOutput("ok", {"id": "1"}), 1000)
    assert small.structured_content == {"id": "1"} and small.content[0].text == "ok"
    big = tool_result(ToolOutput("ok", {"content": "y" * 5000}), 1000)
    assert big.structured_content is None and big.content[0].text == "ok"


def test_the_limit_is_configurable_but_not_below_1000() -> None:
    assert Settings.from_env({}).mcp_max_output_chars == 25_000
    assert Settings.from_env({"MEMLANE_MCP_MAX_OUTPUT_CHARS": "50000"}).mcp_max_output_chars == 50_000
    for bad in ("10", "lots"):
        with pytest.raises(ConfigurationError, match="MEMLANE_MCP_MAX_OUTPUT_CHARS=") as exc:
            Settings.from_env({"MEMLANE_MCP_MAX_OUTPUT_CHARS": bad})
        assert exc.value.variable == "MEMLANE_MCP_MAX_OUTPUT_CHARS"


def test_every_tool_has_a_title_and_all_five_hints() -> None:
    assert set(BEHAVIOUR) == TOOL_NAMES
    for tool in tool_list():
        hints = tool.annotations.model_dump(by_alias=True, exclude_none=True)
        assert set(hints) == {"title", "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"}
        assert tool.title == hints["title"]
