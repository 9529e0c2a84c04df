"""A scripted model on 127.0.0.1 that speaks what the four agent CLIs call.

Anthropic Messages (SSE with `event:` lines, and plain JSON when not streamed) for Claude Code
and OpenCode, the OpenAI Responses API (SSE) for Codex, and Gemini's `streamGenerateContent`
(SSE) and `generateContent` for Gemini CLI. A request picks its script by the first key that
occurs in its body (put the key in the task's prompt); the tool results already in the request
pick the turn, so concurrent sessions need no state. Past the script's end it says "Done.".
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["USAGE", "MockModel", "Turn"]


@dataclass(frozen=True)
class Turn:
    """One scripted reply: run a shell command, load a skill (Claude Code's Skill tool), say
    text, or fail with an HTTP status (`once`: only the first time it is reached; after that the
    script goes on as if it were not there, as a provider's passing overload would)."""

    shell: str | None = None
    text: str | None = None
    status: int | None = None
    skill: str | None = None
    once: bool = False


USAGE = {"input": 1000, "cache_read": 300, "cache_write": 200, "output": 50, "reasoning": 10}
"""What every reply says it used, in armbench's terms (each API states it its own way)."""


class MockModel:
    """A ThreadingHTTPServer on an ephemeral loopback port, logging every request it gets."""

    def __init__(self, scripts: dict[str, list[Turn]]) -> None:
        self.scripts = scripts
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._spent: set[tuple[str, int]] = set()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.server.daemon_threads = True
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """The base URL, without a path."""
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> MockModel:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def turn(self, raw: str, results: int) -> Turn:
        """The scripted reply for a request body with `results` tool results in it."""
        key, script = next(((k, s) for k, s in self.scripts.items() if k in raw), ("", []))
        with self._lock:
            live = [(i, t) for i, t in enumerate(script) if (key, i) not in self._spent]
            if results >= len(live):
                return Turn(text="Done.")
            index, turn = live[results]
            if turn.once:
                self._spent.add((key, index))
            return turn

    def log(self, entry: dict[str, Any]) -> None:
        """Keep a request for the test to read."""
        with self._lock:
            self.requests.append(entry)


def _handler(mock: MockModel) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_HEAD(self) -> None:
            self.send_response(200)
            self.end_headers()

        def do_GET(self) -> None:
            self._json(404, {"error": {"message": f"no GET {self.path} here"}})

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("content-length") or 0)).decode()
            body = json.loads(raw or "{}")
            path = self.path.split("?")[0]
            mock.log({"path": self.path, "body": body, "headers": dict(self.headers)})
            if path.endswith("/messages"):
                self._anthropic(raw, body)
            elif path.endswith("/responses"):
                self._responses(raw, body)
            elif ":streamGenerateContent" in path or ":generateContent" in path:
                model = path.rsplit("/", 1)[-1].split(":")[0]
                self._gemini(raw, body, model, stream=":stream" in path)
            else:
                self._json(404, {"error": {"message": f"no POST {path} here"}})

        def _anthropic(self, raw: str, body: dict[str, Any]) -> None:
            names = [t.get("name") for t in body.get("tools") or []]
            results = sum(1 for m in body.get("messages", []) if isinstance(m.get("content"), list)
                          for b in m["content"] if b.get("type") == "tool_result")
            turn = mock.turn(raw, results)
            scripted = any(key in raw for key in mock.scripts)
            if not names and (not scripted or turn.text is None):  # OpenCode's title call (a
                # judge's answer-only call, offered no tool, gets its scripted text)
                return self._anthropic_reply(body, [{"type": "text", "text": "A title"}], "end_turn")
            if turn.status:
                return self._json(turn.status, {"type": "error", "error": {
                    "type": "api_error", "message": "mock injected error"}})
            if turn.skill is not None:
                block = {"type": "tool_use", "id": f"toolu_{results}", "name": "Skill",
                         "input": {"skill": turn.skill}}
                return self._anthropic_reply(body, [block], "tool_use")
            if turn.shell is not None:
                tool = "Bash" if "Bash" in names else "bash"
                block = {"type": "tool_use", "id": f"toolu_{results}", "name": tool,
                         "input": {"command": turn.shell, "description": "scripted step"}}
                return self._anthropic_reply(body, [block], "tool_use")
            self._anthropic_reply(body, [{"type": "text", "text": turn.text or ""}], "end_turn")

        def _anthropic_reply(self, body: dict[str, Any], blocks: list[dict[str, Any]], stop: str) -> None:
            usage = {"input_tokens": USAGE["input"], "cache_read_input_tokens": USAGE["cache_read"],
                     "cache_creation_input_tokens": USAGE["cache_write"]}
            message = {"id": "msg_mock", "type": "message", "role": "assistant", "model": body.get("model"),
                       "content": [], "stop_reason": None, "stop_sequence": None,
                       "usage": {**usage, "output_tokens": 1}}
            if not body.get("stream"):
                done = {**message, "content": blocks, "stop_reason": stop,
                        "usage": {**usage, "output_tokens": USAGE["output"]}}
                return self._json(200, done)
            events: list[tuple[str, dict[str, Any]]] = [("message_start", {"message": message})]
            for i, block in enumerate(blocks):
                if block["type"] == "text":
                    start = {"type": "text", "text": ""}
                    delta = {"type": "text_delta", "text": block["text"]}
                else:
                    start = {**block, "input": {}}
                    delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
                events += [("content_block_start", {"index": i, "content_block": start}),
                           ("content_block_delta", {"index": i, "delta": delta}),
                           ("content_block_stop", {"index": i})]
            events += [("message_delta", {"delta": {"stop_reason": stop, "stop_sequence": None},
                                          "usage": {"output_tokens": USAGE["output"]}}),
                       ("message_stop", {})]
            self._sse([(name, {"type": name, **data}) for name, data in events])

        def _responses(self, raw: str, body: dict[str, Any]) -> None:
            results = sum(1 for item in body.get("input", [])
                          if str(item.get("type", "")).endswith("_call_output"))
            turn = mock.turn(raw, results)
            if turn.status:
                return self._json(turn.status, {"error": {"message": "mock injected error",
                                                          "type": "server_error"}})
            if turn.shell is not None:
                item = {"type": "function_call", "id": f"fc_{results}", "status": "completed",
                        "name": "exec_command", "arguments": json.dumps({"cmd": turn.shell}),
                        "call_id": f"call_{results}"}
            else:
                item = {"type": "message", "role": "assistant", "id": f"msg_{results}", "status": "completed",
                        "content": [{"type": "output_text", "text": turn.text or "", "annotations": []}]}
            usage = {"input_tokens": USAGE["input"] + USAGE["cache_read"],
                     "input_tokens_details": {"cached_tokens": USAGE["cache_read"]},
                     "output_tokens": USAGE["output"],
                     "output_tokens_details": {"reasoning_tokens": USAGE["reasoning"]},
                     "total_tokens": USAGE["input"] + USAGE["cache_read"] + USAGE["output"]}
            self._sse([("response.output_item.done", {"type": "response.output_item.done",
                                                      "output_index": 0, "item": item}),
                       ("response.completed", {"type": "response.completed",
                                               "response": {"id": f"resp_{results}", "usage": usage}})])

        def _gemini(self, raw: str, body: dict[str, Any], model: str, *, stream: bool) -> None:
            results = sum(1 for c in body.get("contents", []) for p in c.get("parts", [])
                          if "functionResponse" in p)
            has_tools = any(d for t in body.get("tools") or [] for d in t.get("functionDeclarations", []))
            # the routing classifier's call is neither streamed nor offered tools; a judge's
            # answer-only call is streamed with none
            turn = mock.turn(raw, results) if has_tools or stream else Turn(text='{"model_choice": "pro"}')
            if turn.status:
                error = {"code": turn.status, "message": "mock injected error", "status": "INTERNAL"}
                return self._json(turn.status, {"error": error})
            if turn.shell is not None:
                part: dict[str, Any] = {"functionCall": {"name": "run_shell_command",
                                                         "args": {"command": turn.shell}}}
            else:
                part = {"text": turn.text or ""}
            usage = {"promptTokenCount": USAGE["input"] + USAGE["cache_read"],
                     "cachedContentTokenCount": USAGE["cache_read"],
                     "candidatesTokenCount": USAGE["output"] - USAGE["reasoning"],
                     "thoughtsTokenCount": USAGE["reasoning"],
                     "totalTokenCount": USAGE["input"] + USAGE["cache_read"] + USAGE["output"]}
            reply = {"candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP",
                                     "index": 0}], "usageMetadata": usage, "modelVersion": model}
            if stream:
                return self._sse([(None, reply)])
            self._json(200, reply)

        def _sse(self, events: list[tuple[str | None, dict[str, Any]]]) -> None:
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("cache-control", "no-cache")
            self.send_header("connection", "close")
            self.end_headers()
            for name, data in events:
                head = f"event: {name}\n" if name else ""
                self.wfile.write(f"{head}data: {json.dumps(data)}\n\n".encode())
                self.wfile.flush()
            self.close_connection = True

        def _json(self, status: int, data: dict[str, Any]) -> None:
            payload = json.dumps(data).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            if status >= 400:  # clients that retry anyway retry at once
                self.send_header("retry-after-ms", "1")
                self.send_header("retry-after", "0")
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    return Handler
