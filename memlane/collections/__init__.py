"""Collections (the raged seed): ingest items into a collection, query it by meaning, keywords or
metadata, with a rule-based router that says which strategy it chose and why.

A collection is a memlane project (named like the collection); an item is a document whose id is
derived from the item id (`baseId`); its chunks are shown as `<baseId>:<chunkIndex>`.
"""
