"""Packing atoms into chunks: greedily, ending a full chunk at the strongest boundary that leaves it
full enough; atoms longer than a chunk are cut first; prose chunks overlap the previous one."""

from __future__ import annotations

import re

from memlane.ingest.chunking.atoms import WORD, Atom, TextChunk, strip_span


def split_oversized(text: str, atoms: list[Atom], limit: int) -> list[Atom]:
    """Cut atoms longer than `limit` at newlines, else spaces, else (last resort) mid-word."""
    if all(atom.end - atom.start <= limit for atom in atoms):
        return atoms
    result: list[Atom] = []
    for atom in atoms:
        if atom.end - atom.start <= limit:
            result.append(atom)
            continue
        # Pieces start at a non-space (a code line's indentation is not worth a piece of its own).
        start, level = strip_span(text, atom.start, atom.end)[0], atom.level
        while atom.end - start > limit:
            window_end = start + limit
            cut = text.rfind("\n", start + limit // 2, window_end + 1)
            if cut == -1:
                cut = max(text.rfind(space, start + 1, window_end + 1) for space in " \t\u3000")
            if cut == -1:  # one word longer than the limit: cut it
                piece_end, next_start = window_end, window_end
            else:
                piece_end, next_start = strip_span(text, start, cut)[1], cut
            while next_start < atom.end and text[next_start].isspace():
                next_start += 1
            result.append(Atom(start, piece_end, level, atom.path))
            start, level = next_start, WORD
        result.append(Atom(start, atom.end, level, atom.path))
    return result


def pack(
    text: str,
    atoms: list[Atom],
    limit: int,
    min_fill: dict[int, float],
    *,
    eager_level: int | None,
    overlap: int,
) -> list[TextChunk]:
    chunks: list[TextChunk] = []
    first = 0  # index of the first atom that is new in the current chunk (not overlap)
    start = atoms[0].start
    path = atoms[0].path
    i = 1
    while i < len(atoms):
        atom = atoms[i]
        if eager_level is not None and atom.level >= eager_level and atom.start - start > limit // 2:
            cut = i  # a new section starts a new chunk once this one is half full
        elif atom.end - start > limit:
            cut = _best_cut(atoms, first + 1, i, start, limit, min_fill)
        else:
            i += 1
            continue
        if eager_level is not None:  # don't end a chunk on a heading: it belongs to what follows
            back = cut
            while back - 1 > first and atoms[back - 1].level >= eager_level:
                back -= 1
            if atoms[back - 1].level < eager_level:  # (unless the chunk is nothing but headings)
                cut = back
        end = atoms[cut - 1].end
        chunks.append(TextChunk(text[start:end], start, end, path))
        if overlap and (eager_level is None or atoms[cut].level < eager_level):
            start, path = _overlap_start(text, atoms, cut, start, limit, overlap, eager_level)
        else:
            start, path = atoms[cut].start, atoms[cut].path
        first = cut
        i = cut + 1
    end = atoms[-1].end
    chunks.append(TextChunk(text[start:end], start, end, path))
    return chunks


def _best_cut(atoms: list[Atom], lo: int, hi: int, start: int, limit: int, min_fill: dict[int, float]) -> int:
    """The atom to start the next chunk at: the strongest boundary in atoms[lo..hi] that leaves the
    current chunk full enough for its strength; the latest one among equals."""
    best = hi
    best_level = -1
    for k in range(lo, hi + 1):
        level = atoms[k].level
        if level >= best_level and atoms[k].start - start >= min_fill[level] * limit:
            best, best_level = k, level
    return best


def _overlap_start(
    text: str,
    atoms: list[Atom],
    cut: int,
    prev_start: int,
    limit: int,
    overlap: int,
    heading_level: int | None,
) -> tuple[int, tuple[str, ...]]:
    """Where the chunk starting with atoms[cut] begins so that it repeats about `overlap` characters
    of the previous chunk (which spans prev_start..atoms[cut-1].end)."""
    prev_end = atoms[cut - 1].end
    # The new chunk spans [overlap start, atoms[cut].end] and must stay within the limit.
    longest = min(overlap * 3 // 2, limit - (atoms[cut].end - prev_end))
    at_sentence = _sentence_overlap(atoms, cut, prev_start, longest, overlap, heading_level)
    if at_sentence is not None:
        return at_sentence
    return _word_overlap(text, atoms, cut, prev_start, min(overlap, longest), heading_level)


def _sentence_overlap(atoms: list[Atom], cut: int, prev_start: int, longest: int, overlap: int,
                      heading_level: int | None) -> tuple[int, tuple[str, ...]] | None:
    """The sentence boundary whose overlap is closest to `overlap` (at least half of it, at most
    `longest`), never reaching back across a heading; None when there is none."""
    prev_end = atoms[cut - 1].end
    best: tuple[int, tuple[str, ...]] | None = None
    best_distance = overlap
    j = cut - 1
    while j >= 0 and atoms[j].start > prev_start:
        atom = atoms[j]
        repeated = prev_end - atom.start
        if repeated > longest:
            break
        if repeated >= overlap // 2 and abs(repeated - overlap) <= best_distance:
            best, best_distance = (atom.start, atom.path), abs(repeated - overlap)
        if heading_level is not None and atom.level >= heading_level:
            break  # overlap may start at a heading but never reaches back across one
        j -= 1
    return best


def _word_overlap(text: str, atoms: list[Atom], cut: int, prev_start: int, wanted: int,
                  heading_level: int | None) -> tuple[int, tuple[str, ...]]:
    """No sentence boundary fits: start at a word boundary about `wanted` characters back (or at
    atoms[cut] when there is none, or at a heading in between)."""
    prev_end = atoms[cut - 1].end
    target = max(prev_end - wanted, prev_start + 1)
    if target >= prev_end:
        return atoms[cut].start, atoms[cut].path
    if text[target - 1].isspace() and not text[target].isspace():
        word_start = target
    else:
        space = _WHITESPACE.search(text, target, prev_end)
        if space is None:
            return atoms[cut].start, atoms[cut].path
        word_start = space.end()
    j = cut - 1
    while atoms[j].start > word_start:
        if heading_level is not None and atoms[j].level >= heading_level:
            return atoms[j].start, atoms[j].path
        j -= 1
    return word_start, atoms[j].path


_WHITESPACE = re.compile(r"\s+")
