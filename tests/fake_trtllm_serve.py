"""A stand-in of trtllm-serve for the acceptance check: the endpoints TensorRT-LLM 1.1.0's
trtllm-serve page documents, answering one fixed speculative run with records that have the fields
of the iteration statistics (the page's example shows part of them: iter, numActiveRequests, ...).

- GET /health: 200;
- POST /v1/completions: 16 completion tokens, after which the iteration queue holds the context
  iteration (1 token) and 5 generation iterations that each drafted 4 tokens and accepted 2; their
  specDecodingStats carry those counts, or zeros with FAKE_SPEC_COUNTS=0 (as 1.1.0 leaves them:
  TensorRT-LLM PR #9855 fills them, after 1.1.0);
- GET /metrics: the queued iteration statistics as a JSON list, removed once read (as the page says).

Run as a program (``python fake_trtllm_serve.py MODEL --port N ...``, trtllm-serve's own argument
order) it serves until killed: tests put it on PATH as ``trtllm-serve``.
"""

from __future__ import annotations

import http.server
import json
import os
import sys

TOKENS = 16
ITERATIONS = 6  # 1 + 5 x (2 accepted + 1) = 16 tokens


class Handler(http.server.BaseHTTPRequestHandler):
    queue: list = []

    def log_message(self, *args):
        pass

    def _send(self, body, status: int = 200) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path == "/health":
            self._send({})
        elif self.path == "/metrics":
            out, Handler.queue = list(Handler.queue), []
            self._send(out)
        else:
            self._send({"error": "not found"}, 404)

    def do_POST(self):
        json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        filled = os.environ.get("FAKE_SPEC_COUNTS", "1") != "0"
        counts = {"numDraftTokens": 4, "numAcceptedTokens": 2} if filled else {"numDraftTokens": 0, "numAcceptedTokens": 0}
        Handler.queue = [{"iter": i, "numActiveRequests": 1, "inflightBatchingStats": {"numScheduledRequests": 1},
                          **({"specDecodingStats": counts} if i else {})}
                         for i in range(ITERATIONS)]
        Handler.queue.append({"iter": ITERATIONS, "numActiveRequests": 0,
                              "inflightBatchingStats": {"numScheduledRequests": 0}})
        self._send({"choices": [{"text": "x"}], "usage": {"completion_tokens": TOKENS}})


def main(argv: list[str]) -> None:
    port = int(argv[argv.index("--port") + 1])
    http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()


if __name__ == "__main__":
    main(sys.argv[1:])
