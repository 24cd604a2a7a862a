"""The documentation crawler's building blocks. Every URL is treated as hostile (architecture
"Consistency and safety" rule 4):

- ssrf: `check_url` / `NetworkPolicy` - the URL safety guard (schemes, credentials, addresses).
- transport: `PinnedTransport` / `pinned_client` - connections pinned to checked addresses.
- fetcher: `SafeFetcher` - the production `Fetcher` (redirects, timeouts, size cap, 304).
- types: the `Fetcher` port and `FetchResult`.
- urls: `normalize_url`, `in_scope`, `extract_links`, `is_probably_html`.
- robots: `RobotsPolicy`, `load_robots`.  sitemap: `parse_sitemap`, `collect_sitemap_urls`.
- frontier: `CrawlPlan`, the in-memory planner for one docset.
- errors: `UnsafeURLError`, `FetchError` and its subclasses, `SitemapError`.
"""
