"""Issue 34, finding 1: an import never writes a document whose id belongs to another organization.

The attack: `memlane export --org beta --project P`, then `memlane import FILE --org gamma`, left
beta's project empty (its documents now gamma's); a line naming a beta document's id imported with
`--org alpha` replaced beta's document. memlane's answer: an import re-mints every id the importing
organization does not hold (uuid5 of the organization and the old id), with the file's links
(versions, a conversation's messages and facts) following, so the same file imported twice lands on
the same documents; and every store refuses a write of another organization's id
(tests/contracts). A media record in a file never makes memlane read another organization's
original. Reliability row 28."""

from __future__ import annotations

import base64
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass, replace

import pytest
from fakes import FixedClock, HashEmbedder
from PIL import Image, ImageDraw

from memlane.cli import main
from memlane.config import Settings
from memlane.documents.keys import media_key
from memlane.documents.writing import protect
from memlane.domain.facts import RESERVED_KEY
from memlane.domain.models import Document, DocumentStatus
from memlane.domain.principal import Principal
from memlane.domain.requests import MemoryIn
from memlane.ingest.summarize import LocalSummarizer
from memlane.local.compose import LocalStack, build_local
from memlane.local.worker import IngestWorker
from memlane.services import transfer
from memlane.services.keys import ensure_organization
from memlane.services.memory import save_memory
from memlane.services.projects import find_project_by_name
from memlane.services.transfer import FORMAT, export_project, import_lines, reminted_id


class Reader:
    id = "fake-ocr"

    def read_text(self, png: bytes) -> str:
        return "Beta's payroll: 4,200 a month to account 1234"


@dataclass
class World:
    stack: LocalStack
    alpha: Principal
    beta: Principal

    def ids(self, who: Principal) -> set[str]:
        md = self.stack.metadata
        return {d.id for p in md.list_projects(who.organization_id) for d in md.list_documents(who.organization_id, p.id)}


@pytest.fixture
def world(tmp_path) -> Iterator[World]:
    stack = build_local(Settings(data_dir=tmp_path / "d"), embedder=HashEmbedder(), summarizer=LocalSummarizer(),
                        media_readers=(Reader(), None))
    stack.services = replace(stack.services, clock=FixedClock())
    alpha, _ = ensure_organization(stack.metadata, "alpha")
    beta, _ = ensure_organization(stack.metadata, "beta")
    yield World(stack, Principal(organization_id=alpha.id, key_id="ka"), Principal(organization_id=beta.id, key_id="kb"))
    stack.close()


def header(name: str = "Imported") -> str:
    return json.dumps({"format": FORMAT, "project": {"name": name}})


def line(doc: Document, **changes) -> str:
    record = doc.model_dump(mode="json", exclude={"organization_id", "project_id", "status", "status_reason",
                                                  "chunk_count", "embedder"})
    return json.dumps({"document": {**record, **changes}})


# --------------------------------------------------------------------------- the attacks, replayed


def test_exporting_beta_and_importing_into_gamma_leaves_beta_whole(cli_data_dir, cli_hashing, tmp_path, capsys):
    # Given beta's project P with two memories (a version chain)
    assert main(["remember", "--org", "beta", "--project", "P", "Vault code is 1234."]) == 0
    out = capsys.readouterr().out
    assert main(["remember", "--org", "beta", "--project", "P", "Vault code is 5678."]) == 0
    capsys.readouterr()
    export = tmp_path / "p.jsonl"
    assert main(["export", "--org", "beta", "--project", "P", "-o", str(export)]) == 0
    exported = [json.loads(x)["document"]["id"] for x in export.read_text().splitlines()[1:]]
    assert len(exported) == 2 and out
    # When the file is imported into gamma
    assert main(["import", str(export), "--org", "gamma"]) == 0
    result = json.loads(capsys.readouterr().out)
    # Then beta's project still holds both documents, and gamma holds copies under ids of its own
    stack = build_local(Settings(data_dir=cli_data_dir), embedder=HashEmbedder())
    try:
        md = stack.metadata
        beta = md.find_organization_by_slug("beta")
        gamma = md.find_organization_by_slug("gamma")
        beta_p = md.find_project_by_slug(beta.id, "p")
        assert sorted(d.id for d in md.list_documents(beta.id, beta_p.id)) == sorted(exported)
        assert all(d.organization_id == beta.id for d in md.get_documents(beta.id, exported))
        gamma_p = md.find_project_by_slug(gamma.id, "p")
        copies = md.list_documents(gamma.id, gamma_p.id)
        assert sorted(d.id for d in copies) == sorted(reminted_id(gamma.id, i) for i in exported)
        assert md.get_documents(gamma.id, exported) == []
    finally:
        stack.close()
    assert (result["imported"], result["reminted"]) == (2, 2)


def test_a_line_naming_another_organizations_document_never_replaces_it(world):
    # Given beta's memory
    theirs = save_memory(world.stack.services, world.beta, MemoryIn(content="Beta's vault code is 1234."))
    original = world.stack.metadata.get_document(world.beta.organization_id, theirs.id)
    # When alpha imports a file whose one line names beta's document id, with other text
    forged = line(original, title="Forged", content="The vault code is 0000.", content_hash="")
    result = import_lines(world.stack.services, world.alpha, [header(), forged])
    # Then beta's document is as it was, and alpha's copy has an id of alpha's own
    assert world.stack.metadata.get_document(world.beta.organization_id, theirs.id) == original
    assert world.stack.metadata.get_document(world.alpha.organization_id, theirs.id) is None
    copy = world.stack.metadata.get_document(world.alpha.organization_id, reminted_id(world.alpha.organization_id,
                                                                                      theirs.id))
    assert copy is not None and copy.content == "The vault code is 0000." and result["reminted"] == 1
    # and the store itself refuses the id, whoever asks
    from memlane.domain.errors import IdTakenError

    with pytest.raises(IdTakenError):
        world.stack.metadata.put_document(copy.model_copy(update={"id": theirs.id}))
    assert world.stack.metadata.get_document(world.beta.organization_id, theirs.id) == original


def test_a_file_moved_between_organizations_keeps_its_versions_and_conversations(world):
    # Given a file of beta's: two versions of a memory, two messages and the fact drawn from them
    v1 = Document(organization_id="x", project_id="x", user_id="u", title="Cake", content="Two eggs.")
    v2 = Document(organization_id="x", project_id="x", user_id="u", title="Cake", content="Three eggs.",
                  updates_memory_id=v1.id)
    v1 = v1.model_copy(update={"superseded_by": v2.id})
    m1 = Document(organization_id="x", project_id="x", user_id="u", title="m1", content="I moved to Lisbon.",
                  conversation_id="chat-1", message_index=0)
    m2 = Document(organization_id="x", project_id="x", user_id="u", title="m2", content="Near the river.",
                  conversation_id="chat-1", message_index=1)
    fact = Document(organization_id="x", project_id="x", user_id="u", title="fact", content="Lives in Lisbon.",
                    metadata={RESERVED_KEY: {"kind": "fact", "subject": "home", "sources": [m1.id, m2.id],
                                             "decisions": [{"outcome": "new", "reason": "first", "fact": "x",
                                                            "sources": [m1.id], "supersedes": v1.id,
                                                            "decided_at": "2025-01-01T00:00:00Z"}]}})
    m1 = m1.model_copy(update={"metadata": {RESERVED_KEY: {"kind": "message", "facts": [fact.id]}}})
    m2 = m2.model_copy(update={"metadata": {RESERVED_KEY: {"kind": "message", "facts": [fact.id]}}})
    lines = [header(), *(line(d) for d in (v1, v2, m1, m2, fact))]
    # When alpha imports it
    result = import_lines(world.stack.services, world.alpha, lines)
    assert (result["imported"], result["reminted"]) == (5, 5)
    org = world.alpha.organization_id
    new = {d.id: reminted_id(org, d.id) for d in (v1, v2, m1, m2, fact)}
    got = {old: world.stack.metadata.get_document(org, n) for old, n in new.items()}
    # Then every link names the new ids
    assert got[v1.id].superseded_by == new[v2.id] and got[v2.id].updates_memory_id == new[v1.id]
    own = got[fact.id].metadata[RESERVED_KEY]
    assert own["sources"] == [new[m1.id], new[m2.id]]
    assert own["decisions"][0]["sources"] == [new[m1.id]] and own["decisions"][0]["supersedes"] == new[v1.id]
    assert got[m1.id].metadata[RESERVED_KEY]["facts"] == [new[fact.id]]
    assert got[m2.id].conversation_id == "chat-1" and got[m2.id].message_index == 1
    # and the same file again changes nothing
    again = import_lines(world.stack.services, world.alpha, lines)
    assert (again["imported"], again["skipped"]) == (0, 5) and len(world.ids(world.alpha)) == 5


def test_an_export_imported_into_its_own_organization_is_skipped(world):
    save_memory(world.stack.services, world.beta, MemoryIn(content="The boat key hangs by the door."))
    project = find_project_by_name(world.stack.services, world.beta, "Default")
    lines = list(export_project(world.stack.services, world.beta, project))
    before = world.ids(world.beta)
    result = import_lines(world.stack.services, world.beta, lines)
    assert (result["imported"], result["skipped"], result["reminted"]) == (0, 1, 0)
    assert world.ids(world.beta) == before


def png() -> bytes:
    picture = Image.new("RGB", (400, 100), "white")
    ImageDraw.Draw(picture).text((10, 40), "payroll", fill="black")
    out = io.BytesIO()
    picture.save(out, "PNG")
    return out.getvalue()


def test_a_media_record_in_a_file_never_reads_another_organizations_original(world, monkeypatch):
    # Given beta's image memory (its original kept under beta's key)
    saved = save_memory(world.stack.services, world.beta,
                        MemoryIn(content=base64.b64encode(png()).decode(), content_type="image"))
    theirs = world.stack.metadata.get_document(world.beta.organization_id, saved.id)
    assert theirs.media is not None and world.stack.services.blobs.get(theirs.media.blob_key) is not None
    # When alpha imports a record of it crafted to look unread (its text to be read from the
    # original), and the import stops right after storing it (the process killed), so that its
    # safety-net job hands the document to the worker, which reads a media document's original
    crafted = line(theirs, content="", content_hash="",
                   media={**theirs.media.model_dump(mode="json"), "extracted_by": None})
    svc = world.stack.services
    monkeypatch.setattr(transfer, "write_in_request", lambda svc, docs: [protect(svc, d) for d in docs])
    import_lines(svc, world.alpha, [header(), crafted])
    svc.clock.advance(minutes=11)  # type: ignore[attr-defined]  # FixedClock: the job is due
    IngestWorker(svc, world.stack.queue).drain()
    # Then alpha's document names alpha's own key, and beta's original was never read into it
    copy = world.stack.metadata.get_document(world.alpha.organization_id,
                                             reminted_id(world.alpha.organization_id, saved.id))
    assert copy is not None and copy.media.blob_key == media_key(world.alpha.organization_id, copy.id)
    assert "payroll" not in copy.content.lower()
    assert copy.status == DocumentStatus.FAILED and "missing" in (copy.status_reason or "")
    # and beta's memory and original are untouched
    assert world.stack.metadata.get_document(world.beta.organization_id, saved.id) == theirs
    assert world.stack.services.blobs.get(theirs.media.blob_key) is not None
