"""The rule-based router: keyword, natural-language and filter-only queries."""

from __future__ import annotations

import pytest

from memlane.collections.router import Strategy, classify, route


@pytest.mark.parametrize(("query", "strategy", "confidence", "rule"), [
    # keywords: a few words go to the fused k-NN + BM25 ranking
    ("auth token refresh", Strategy.HYBRID, 0.8, "short_keywords"),
    ("postgres", Strategy.HYBRID, 0.8, "short_keywords"),
    # identifiers and exact phrases: BM25 finds what embeddings blur
    ("parse_config", Strategy.HYBRID, 0.9, "code_or_exact_terms"),
    ("where is getUserById defined", Strategy.HYBRID, 0.9, "code_or_exact_terms"),
    ("src/auth.ts", Strategy.HYBRID, 0.9, "code_or_exact_terms"),
    ('error "connection reset by peer" in logs', Strategy.HYBRID, 0.9, "code_or_exact_terms"),
    # natural language: embeddings
    ("how do users sign in to the dashboard", Strategy.SEMANTIC, 0.9, "question"),
    ("Why does the build fail", Strategy.SEMANTIC, 0.9, "question"),
    ("login broken?", Strategy.SEMANTIC, 0.9, "question"),
    ("the part of the code that sends reminder emails", Strategy.SEMANTIC, 0.7, "natural_language"),
])
def test_rules_pick_a_strategy_for_text_queries(query, strategy, confidence, rule):
    assert classify(query, has_filter=False) == (strategy, confidence, rule)
    # a filter does not change the choice while there is text to rank
    assert classify(query, has_filter=True) == (strategy, confidence, rule)


def test_filter_only_queries_are_metadata_queries():
    assert classify(None, has_filter=True) == (Strategy.METADATA, 1.0, "filter_only")
    assert classify("   ", has_filter=True) == (Strategy.METADATA, 1.0, "filter_only")
    with pytest.raises(ValueError):
        classify("", has_filter=False)


def test_route_reports_method_and_an_explicit_choice_wins():
    auto = route("how do I rotate keys", has_filter=False, explicit=None)
    assert (auto.strategy, auto.method, auto.confidence, auto.rule) == (
        Strategy.SEMANTIC, "rule", 0.9, "question")
    assert auto.duration_ms >= 0
    forced = route("how do I rotate keys", has_filter=False, explicit=Strategy.METADATA)
    assert (forced.strategy, forced.method, forced.confidence, forced.rule) == (
        Strategy.METADATA, "explicit", 1.0, "explicit")
