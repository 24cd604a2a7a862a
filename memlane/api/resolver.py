"""The one REST resolver, safe for concurrent requests in one process.

Powertools keeps the request being resolved in class attributes of BaseRouter (current_event,
lambda_context) and in the resolver's `context` dict, so a stock resolver serves one request at a
time per process. Lambda runs one request per execution environment and never notices; the local
server runs requests in threads, and used to serialise them all behind one lock (a save embedding
a long page held up every recall and even /health).

Here that state lives in a ContextVar, one per request, as Powertools' own HttpResolverLocal does
for ASGI. The ContextVar is shared by every instance of this class, so the module-level routers
(memlane.api.routes) read the right request whichever resolver included them last. The one other
thing Powertools builds lazily and shares, a route's middleware stack, is built under a lock.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, ClassVar

from aws_lambda_powertools.event_handler import APIGatewayRestResolver
from aws_lambda_powertools.event_handler.api_gateway import BaseRouter


@dataclass
class _RequestState:
    event: Any = None
    lambda_context: Any = None
    context: dict = field(default_factory=dict)
    processed_stack_frames: list[str] = field(default_factory=list)


# Outside any request (building the OpenAPI document, a test calling resolve() directly).
_OUTSIDE = _RequestState()


class ConcurrentRestResolver(APIGatewayRestResolver):
    _request: ClassVar[ContextVar[_RequestState | None]] = ContextVar("memlane_request", default=None)
    _build_lock: ClassVar[threading.Lock] = threading.Lock()

    @contextmanager
    def request_scope(self) -> Iterator[None]:
        """Everything one request reads and writes of the resolver's state, from the moment its
        context is appended until its response is built."""
        token = self._request.set(_RequestState())
        try:
            yield
        finally:
            self._request.reset(token)

    @property
    def _state(self) -> _RequestState:
        return self._request.get() or _OUTSIDE

    @property
    def current_event(self) -> Any:
        return self._state.event or BaseRouter.current_event

    @current_event.setter
    def current_event(self, value: Any) -> None:
        self._state.event = value

    @property
    def lambda_context(self) -> Any:
        return self._state.lambda_context or BaseRouter.lambda_context

    @lambda_context.setter
    def lambda_context(self, value: Any) -> None:
        self._state.lambda_context = value

    @property
    def context(self) -> dict:
        return self._state.context

    @context.setter
    def context(self, value: dict) -> None:
        self._state.context = value

    @property
    def processed_stack_frames(self) -> list[str]:
        return self._state.processed_stack_frames

    @processed_stack_frames.setter
    def processed_stack_frames(self, value: list[str]) -> None:
        self._state.processed_stack_frames = value

    def resolve(self, event: Any, context: Any) -> dict[str, Any]:
        # Powertools' resolve() still assigns BaseRouter's class attributes; this request reads
        # its own copy through the properties above.
        self.current_event = self._to_proxy_event(event)
        self.lambda_context = context
        return super().resolve(event, context)

    def _call_route(self, route: Any, route_arguments: dict[str, str]) -> Any:
        if not route._middleware_stack_built:
            with self._build_lock:
                if not route._middleware_stack_built:
                    route._build_middleware_stack(router_middlewares=self._router_middlewares, app=self)
        return super()._call_route(route, route_arguments)
