#!/usr/bin/env python3
"""Is speculation on, and what does it accept? Measured against your running server.

Standard library only: copy this file next to your server and run it with any Python 3.9+.

    python3 check_acceptance.py --triton http://127.0.0.1:8000 --max-draft-len 4
    python3 check_acceptance.py --openai http://127.0.0.1:8000 --model MODEL --max-draft-len 4

It sends a few requests one at a time (greedy, a fixed number of new tokens) and reports the
first measure the server supports, and why the others did not apply:

Triton's llmapi model (--triton):
  1. counters: the per-request counters (sampling_param_return_perf_metrics). TensorRT-LLM 1.1.0
     and 1.2.1 leave them at zero with TorchSampler, the default (TensorRT-LLM PR #17082 fills them,
     after 1.2.1), so on those releases this measure is reported as not filled.
  2. steps: a streamed request counted in events, one per decoding step on a model.py that streams
     per step (TensorRT-LLM PR #14079, after 1.2.1; 1.1.0's and 1.2.1's send one event). Needs a
     decoupled model; new tokens per step after the first, with one request in flight, is the
     acceptance length.
trtllm-serve (--openai):
  1. iterations: the iteration statistics at /metrics (start the server with
     enable_iter_perf_stats: true in its YAML): the output tokens of each request over the
     iterations that scheduled it, with nothing else in flight and the overlap scheduler off (with it on, a request
     stays scheduled one iteration past its last token, which lowers the figure a little); and the
     draft counts of specDecodingStats where the release fills them (TensorRT-LLM PR #9855, after
     1.1.0; on 1.1.0 they most likely read 0, and then no draft-count line is printed).

The acceptance rate printed is accepted / drafted, with max_draft_len drafts on every step for
the step-based measures. Exit status: 0 measured, 3 no measure available here (it says why),
2 bad arguments or a server that does not answer.
"""

from __future__ import annotations

import argparse
import http.client
import json
import sys
import urllib.error
import urllib.request

# Prompts whose answers repeat their input: drafts have something to get right.
PROMPTS = (
    "Rename the variable total to subtotal in this function and return the whole function:\n"
    "def add(items):\n    total = 0\n    for item in items:\n        total += item.price * item.count\n"
    "    return total\n",
    "Repeat this list exactly, one item per line: apples, pears, plums, cherries, apples, pears, plums.",
)
TIMEOUT_S = 600


class Unavailable(Exception):
    """This measure does not apply to this server: the message says why."""


def _post(url: str, body: dict) -> bytes:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=TIMEOUT_S) as resp:
        return resp.read()


def _get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=TIMEOUT_S) as resp:
        return resp.read()


def _number(value) -> float:
    """Triton's llmapi model returns its counters as strings."""
    if isinstance(value, list):
        value = value[0] if value else 0
    return float(value or 0)


# -- Triton's llmapi model -----------------------------------------------------------------------
def triton_counters(base: str, model: str, prompts, max_tokens: int) -> str:
    drafted = accepted = 0
    for prompt in prompts:
        out = json.loads(_post(f"{base}/v2/models/{model}/generate", {
            "text_input": prompt, "sampling_param_max_tokens": max_tokens,
            "sampling_param_exclude_input_from_output": True, "sampling_param_return_perf_metrics": True}))
        if "total_draft_tokens" not in out:
            raise Unavailable("the model has no total_draft_tokens output (not an llmapi model of 1.1.0 or later?)")
        drafted += int(_number(out["total_draft_tokens"]))
        accepted += int(_number(out.get("total_accepted_draft_tokens")))
    if drafted == 0:
        raise Unavailable("drafted 0, accepted 0 on every request: the counters are not filled (TensorRT-LLM "
                          "1.1.0 and 1.2.1 leave them at zero with TorchSampler), or speculation is off")
    return (f"counters: {accepted} of {drafted} draft tokens accepted over {len(prompts)} requests, "
            f"acceptance rate {accepted / drafted:.3f}")


def triton_steps(base: str, model: str, prompts, max_tokens: int, max_draft_len: int) -> str:
    tokens = steps = requests = 0
    for prompt in prompts:
        body = {"text_input": prompt, "streaming": True, "sampling_param_max_tokens": max_tokens,
                "sampling_param_exclude_input_from_output": True, "return_finish_reason": True}
        try:
            raw = _post(f"{base}/v2/models/{model}/generate_stream", body).decode()
        except urllib.error.HTTPError as err:
            raise Unavailable(f"generate_stream answered HTTP {err.code} (streaming needs a decoupled model: "
                              "triton_config.decoupled and model_transaction_policy in config.pbtxt)") from None
        events = [json.loads(line[len("data: "):]) for line in raw.splitlines() if line.startswith("data: ")]
        if not events or "error" in events[-1]:
            raise Unavailable(f"the stream carried no answer: {events[-1] if events else raw[:200]}")
        reason = events[-1].get("finish_reason")
        reason = reason[0] if isinstance(reason, list) and reason else reason
        if reason not in ("length", None):
            continue  # stopped before max_tokens: its token count is unknown without a tokenizer
        if len(events) < 2:
            raise Unavailable(f"one event for {max_tokens} tokens: this model.py does not stream per step "
                              "(TensorRT-LLM 1.1.0 and 1.2.1 send one event; PR #14079 streams per step)")
        tokens += max_tokens
        steps += len(events)
        requests += 1
    if not requests:
        raise Unavailable("every answer stopped before max_tokens: raise --max-tokens or use other prompts")
    return _per_step("steps", tokens, steps, requests, max_draft_len, "streamed events")


def _per_step(name: str, tokens: int, steps: int, requests: int, max_draft_len: int, what: str) -> str:
    """Each request's first step (its prompt) yields one token; each later one the accepted drafts plus one."""
    if steps <= requests:
        raise Unavailable(f"{steps} {what} for {requests} requests: not one generation step was counted")
    length = (tokens - requests) / (steps - requests)
    rate = (length - 1) / max_draft_len
    return (f"{name}: {tokens} tokens in {steps} {what} over {requests} requests, one in flight: acceptance length "
            f"{length:.2f} tokens per step after the first, acceptance rate {rate:.3f} at max_draft_len {max_draft_len}")


# -- trtllm-serve ----------------------------------------------------------------------------------
def _drain(base: str) -> list:
    """The queued iteration records (as dicts: older releases send each as a JSON string)."""
    try:
        stats = json.loads(_get(f"{base}/metrics"))
    except (urllib.error.HTTPError, json.JSONDecodeError):
        raise Unavailable("/metrics did not answer a JSON list (trtllm-serve 1.1.0 or later serves it)") from None
    out = []
    for record in stats if isinstance(stats, list) else []:
        if isinstance(record, str):
            try:
                record = json.loads(record)
            except json.JSONDecodeError:
                continue
        if isinstance(record, dict):
            out.append(record)
    return out


def openai_iterations(base: str, model: str, prompts, max_tokens: int, max_draft_len: int) -> str:
    _drain(base)  # the queue holds earlier iterations: empty it first
    tokens = iterations = drafted = accepted = 0
    spec_seen = False
    for prompt in prompts:
        out = json.loads(_post(f"{base}/v1/completions", {"model": model, "prompt": prompt, "max_tokens": max_tokens,
                                                           "temperature": 0}))
        stats = _drain(base)
        if not stats:
            raise Unavailable("/metrics returned no iteration: start trtllm-serve with enable_iter_perf_stats: true")
        tokens += int(out["usage"]["completion_tokens"])
        for it in stats:
            ifb = it.get("inflightBatchingStats") or {}
            scheduled = (ifb.get("numScheduledRequests")
                         or ifb.get("numContextRequests", 0) + ifb.get("numGenRequests", 0)
                         or it.get("numActiveRequests", 0))
            iterations += 1 if scheduled else 0
            spec = it.get("specDecodingStats")
            if isinstance(spec, dict) and "numDraftTokens" in spec:
                spec_seen = True
                drafted += int(spec.get("numDraftTokens") or 0)
                accepted += int(spec.get("numAcceptedTokens") or 0)
    line = _per_step("iterations", tokens, iterations, len(prompts), max_draft_len, "iterations from /metrics")
    line += " (assumes the overlap scheduler is off: with it on, each request counts one iteration more)"
    if spec_seen and drafted:
        line += f"; specDecodingStats: {accepted} of {drafted} draft tokens accepted ({accepted / drafted:.3f})"
    return line


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument("--triton", metavar="URL", help="Triton's HTTP endpoint, e.g. http://127.0.0.1:8000")
    where.add_argument("--openai", metavar="URL", help="trtllm-serve's endpoint, e.g. http://127.0.0.1:8000")
    p.add_argument("--model", help="Triton model name (default tensorrt_llm) or the served model's name")
    p.add_argument("--max-draft-len", type=int, required=True, help="the server's speculative_config.max_draft_len")
    p.add_argument("--max-tokens", type=int, default=64, help="new tokens per request (default 64)")
    p.add_argument("--prompt", action="append", help="a prompt of your own (repeatable); default: two built in")
    args = p.parse_args(argv)
    if args.max_draft_len < 1 or args.max_tokens < 2:
        p.error("--max-draft-len must be at least 1 and --max-tokens at least 2")
    if not (args.triton or args.openai).startswith(("http://", "https://")):
        p.error("the server's URL starts with http:// or https:// (e.g. http://127.0.0.1:8000)")
    prompts = tuple(args.prompt or PROMPTS)
    if args.triton:
        base, model = args.triton.rstrip("/"), args.model or "tensorrt_llm"
        measures = [("counters", lambda: triton_counters(base, model, prompts, args.max_tokens)),
                    ("steps", lambda: triton_steps(base, model, prompts, args.max_tokens, args.max_draft_len))]
    else:
        if not args.model:
            p.error("--openai needs --model (the name trtllm-serve serves)")
        base, model = args.openai.rstrip("/"), args.model
        measures = [("iterations", lambda: openai_iterations(base, model, prompts, args.max_tokens,
                                                              args.max_draft_len))]
    print(f"server: {base}, model {model}, max_draft_len {args.max_draft_len}, {len(prompts)} prompts, "
          f"{args.max_tokens} new tokens each, one request at a time")
    for name, measure in measures:
        try:
            print(f"measured by {measure()}")
            return 0
        except Unavailable as why:
            print(f"{name}: not available: {why}")
        except (urllib.error.URLError, OSError, ValueError, KeyError, TypeError, AttributeError,
                http.client.HTTPException) as err:  # not an HTTP server of that kind (a gRPC port, say)
            print(f"check_acceptance.py: {base}: {type(err).__name__}: {err}", file=sys.stderr)
            return 2
    print("no acceptance measure is available from this server; see the measures above, or measure the speed-up "
          "against the same server without speculative_config")
    return 3


if __name__ == "__main__":
    sys.exit(main())
