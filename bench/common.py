"""What every benchmark and evaluation shares: the machine line, a free loopback port, a percentile,
and writing one section of BENCHMARKS.md."""

from __future__ import annotations

import os
import platform
import socket
from pathlib import Path


def free_port() -> int:
    """A port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def p95(sorted_ms: list[float]) -> float:
    return sorted_ms[max(0, int(len(sorted_ms) * 0.95) - 1)]


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        kb = int(Path("/proc/meminfo").read_text().split()[1])
        mem = f", {kb / 1024 / 1024:.0f} GiB RAM"
    except (OSError, ValueError, IndexError):
        pass
    return f"{cpu}, {os.cpu_count()} cores{mem}, Python {platform.python_version()}, {platform.system()}"


def write_section(path: Path, name: str, body: str) -> None:
    """Replace (or append) the `<!-- bench:name -->` section of BENCHMARKS.md."""
    start, end = f"<!-- bench:{name} -->", f"<!-- /bench:{name} -->"
    text = path.read_text() if path.exists() else "# Benchmarks\n"
    block = f"{start}\n{body.rstrip()}\n{end}"
    if start in text and end in text:
        before, rest = text.split(start, 1)
        _, after = rest.split(end, 1)
        text = before + block + after
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    path.write_text(text)
