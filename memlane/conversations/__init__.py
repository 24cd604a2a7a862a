"""Conversations: messages saved as memories, facts drawn from them by an LLM when one is
configured, reconciled with the facts already known (memlane.domain.facts keeps the links).

    schemas     POST /v3/conversations and GET /v3/extractions/{id}
    prompts     every prompt memlane sends an LLM, each with the JSON schema of its answer
    budget      the monthly token budget per organization, and the one way to call the LLM
    service     saving a conversation and queueing its extraction
    extraction  the extraction job: facts, reconciliation, storage
"""
