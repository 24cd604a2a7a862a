"""The Python client for memlane's HTTP API.

    from memlane_client import MemlaneClient

    with MemlaneClient("http://127.0.0.1:7432", api_key="mlk_...") as memlane:
        memlane.remember("The ferry leaves at nine.", title="Ferry")
        print(memlane.recall("when does the ferry leave?")["results"])
"""

from memlane_client.client import MemlaneClient
from memlane_client.errors import MemlaneError, MemlaneUnreachable

__all__ = ["MemlaneClient", "MemlaneError", "MemlaneUnreachable"]
