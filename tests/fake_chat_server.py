"""A fake OpenAI-compatible Chat Completions server on loopback (127.0.0.1, a free port), written
from the public API reference (POST /v1/chat/completions: `messages`, `response_format`; the answer's
`choices[0].message.content` and `usage`). memlane's adapter talks to it over real HTTP, as it
would to Ollama, vLLM or LM Studio.

It is scripted and deterministic: a `brain` turns each request (the schema's name and the JSON
document memlane sent as the user turn) into the JSON answer; `fail_next` and `malformed_next`
queue outages (HTTP 503) and unusable answers; `down` makes every request fail. Token usage is a
fixed function of the texts (a quarter of their characters).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Brain = Callable[[str, dict[str, Any]], dict[str, Any]]


class FakeChatServer:
    def __init__(self, brain: Brain) -> None:
        self.brain = brain
        self.requests: list[dict[str, Any]] = []
        self.failures: list[int] = []  # HTTP statuses for the next requests
        self.malformed: list[str] = []  # raw answers for the next requests
        self.down = False
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                return None

            def do_POST(self) -> None:  # noqa: N802 - the http.server API
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                status, answer = server.answer(self.path, body)
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> FakeChatServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def fail_next(self, count: int, status: int = 503) -> None:
        self.failures += [status] * count

    def malformed_next(self, *answers: str) -> None:
        self.malformed += list(answers)

    def tasks(self) -> list[str]:
        return [r["response_format"]["json_schema"]["name"] for r in self.requests]

    def answer(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        with self._lock:
            if path != "/v1/chat/completions":
                return 404, {"error": {"message": f"no route {path}", "type": "invalid_request_error"}}
            self.requests.append(body)
            if self.down or self.failures:
                status = self.failures.pop(0) if self.failures else 503
                return status, {"error": {"message": "the model is overloaded", "type": "server_error"}}
            messages = body["messages"]
            user = json.loads(messages[-1]["content"])
            task = body["response_format"]["json_schema"]["name"]
            content = self.malformed.pop(0) if self.malformed else json.dumps(self.brain(task, user))
        prompt_tokens = sum(len(m["content"]) for m in messages) // 4
        completion_tokens = len(content) // 4
        return 200, {
            "id": f"chatcmpl-{len(self.requests)}", "object": "chat.completion", "created": 0,
            "model": body["model"],
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens},
        }
