"""A document's life, in one package: written, rewritten, removed, forgotten, with a receipt.

    writer      the one write path (DocumentWriter): begin, cut, embed, commit, context
    writing     writing in the request, with the job queue as its safety net
    workflow    the same write path as Step Functions steps (AWS, large documents)
    media       reading a saved image or recording (OCR, transcripts) before it is written
    contextual  contextual indexing: the memories saved around a short memory, at write time
    progress    embedding batches kept between attempts
    lifecycle   versions and the one removal path (remove_document)
    receipts    deletion receipts: every store read back after a delete
    forget      the auto-forget sweep
    keys        where a document's files live in the blob store
    cache       the recall cache's side of a write

Below it: memlane.ingest (pure steps: extract, chunk, embed, summarize), memlane.ports and the
domain. Above it: memlane.services (request-level use cases), which may import this package;
nothing here imports services.
"""
