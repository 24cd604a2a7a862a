"""The words of code identifiers, for the text index only (memlane.ingest.identifiers)."""

from __future__ import annotations

import pytest

from memlane.domain.models import Chunk, ContentType
from memlane.ingest.identifiers import (
    identifier_words,
    index_words,
    query_identifier_words,
    split_identifiers,
)


@pytest.mark.parametrize(
    ("identifier", "words"),
    [
        ("getUserName", ["get", "user", "name"]),
        ("read_user_name", ["read", "user", "name"]),
        ("os.path.join", ["os", "path", "join"]),
        ("HTTPServer.serve_forever", ["http", "server", "serve", "forever"]),
        ("parseJSONResponse", ["parse", "json", "response"]),
        ("__init__", ["init"]),
        ("getX", ["get"]),  # a one-letter part names nothing
        ("base64Encode", ["base", "64", "encode"]),
        ("MAX_RETRIES", ["max", "retries"]),
    ],
)
def test_an_identifier_breaks_into_its_words(identifier: str, words: list[str]) -> None:
    assert identifier_words(identifier) == words


def test_only_compound_identifiers_add_words_each_once() -> None:
    code = (
        "def getUserName(user_id):\n"
        "    name = cache.get(user_id)\n"
        "    return name or getUserName(user_id)\n"
    )
    # plain words (def, name, return) add nothing: they are already terms as written
    assert split_identifiers(code) == "get user name user id cache get"


def test_prose_has_no_identifiers() -> None:
    assert split_identifiers("The ferry leaves at dawn, e.g. at 6 a.m. from the U.S. side.") == ""


def test_only_code_chunks_get_index_words() -> None:
    def chunk(content_type: ContentType) -> Chunk:
        return Chunk(id="c", document_id="d", organization_id="o", project_id="p", content="x = getUserName()",
                     chunk_index=0, chunk_count=1, start_offset=0, end_offset=17, content_type=content_type)

    assert index_words(chunk(ContentType.CODE)) == "get user name"
    assert index_words(chunk(ContentType.MARKDOWN)) == ""  # prose is searched as written


def test_a_query_keeps_its_words_and_gains_its_identifiers_words() -> None:
    assert query_identifier_words("where is getUserName called") == "where is getUserName called get user name"
    assert query_identifier_words("how much notice for my landlord") == "how much notice for my landlord"
