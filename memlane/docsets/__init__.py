"""Documentation sets (the Mem-Oracle API): crawl a docs site, keep it fresh, retrieve snippets.

- models: the docset, page and session records, settings, and the API's request/response shapes.
- pages: the per-page steps (fetch → extract → index). One page at a time for a Lambda page
  worker; the local runner calls the same functions and batches the embedding across pages.
- runner: the local crawl runner (fetch threads, one embedding thread, stuck-page reaper,
  periodic refresh).
- service: what the routes call (index, status, refresh, delete, sessions).
- retrieval: /retrieve - both search legs, memlane's one fusion function, per-page diversity and
  a character budget.
"""
