"""raged's chunker: ~1800-character chunks on line boundaries, as slices of the stored text."""

from __future__ import annotations

import pytest

from memlane.collections.chunking import MAX_CHUNK_CHARS, chunk_lines, normalize_item_text


def test_short_text_is_one_chunk_of_the_trimmed_text():
    text = normalize_item_text("  \r\nline one\r\nline two\r\n\n")
    assert text == "line one\nline two"
    chunks = chunk_lines(text)
    assert [(c.text, c.start_offset, c.end_offset) for c in chunks] == [("line one\nline two", 0, 17)]


def test_long_text_is_cut_on_line_boundaries_into_chunks_of_at_most_1800_chars():
    lines = [f"line {i:04d} " + "x" * 80 for i in range(100)]  # 90 chars each, 9,099 in all
    text = "\n".join(lines)
    chunks = chunk_lines(text)
    assert MAX_CHUNK_CHARS == 1800
    assert len(chunks) == 6
    for c in chunks:
        assert len(c.text) <= 1800
        assert text[c.start_offset:c.end_offset] == c.text
        # every chunk starts at a line start and ends at a line end
        assert c.start_offset == 0 or text[c.start_offset - 1] == "\n"
        assert c.end_offset == len(text) or text[c.end_offset] == "\n"
    # greedy: a chunk holds as many whole lines as fit (19 × 90 + 18 newlines = 1,728; 20 would be 1,819)
    assert [c.text.count("\n") + 1 for c in chunks] == [19, 19, 19, 19, 19, 5]
    assert "\n".join(c.text for c in chunks) == text


def test_a_line_longer_than_the_limit_is_split_at_spaces():
    words = " ".join(f"w{i:05d}" for i in range(600))  # one 4,199-character line
    chunks = chunk_lines(words)
    assert all(len(c.text) <= 1800 for c in chunks) and len(chunks) == 3
    assert " ".join(c.text for c in chunks) == words
    assert all(not c.text.startswith(" ") and not c.text.endswith(" ") for c in chunks)


def test_a_line_without_spaces_is_cut_hard():
    chunks = chunk_lines("a" * 4000)
    assert [len(c.text) for c in chunks] == [1800, 1800, 400]


def test_blank_text_has_no_chunks_and_the_limit_must_be_positive():
    assert chunk_lines("   \n  ") == []
    with pytest.raises(ValueError):
        chunk_lines("x", max_chars=0)
