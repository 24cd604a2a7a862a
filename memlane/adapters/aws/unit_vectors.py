"""Unit vectors for the AWS search indexes: OpenSearch's inner product and S3 Vectors' cosine both
want the embedder's vectors at unit length (memlane's embedders normalise already; this makes a stray
one harmless)."""

from __future__ import annotations

import math
from collections.abc import Sequence


def normalize(vector: Sequence[float]) -> list[float]:
    # Plain Python, not numpy: a few thousand multiply-adds per chunk, and the Lambda layer stays
    # ~48 MB smaller without numpy (the AWS path needs it nowhere else).
    values = [float(v) for v in vector]
    norm = math.sqrt(math.fsum(v * v for v in values))
    if norm == 0.0 or not math.isfinite(norm):
        return values
    return [v / norm for v in values]
