"""``specdec-guide estimate``: the acceptance NGram (or your drafter) would get on traffic you logged.

With greedy decoding the output of a request is fixed by its prompt, whatever the drafter: a
draft token is accepted iff it equals the token the target produced next. So a log of
(prompt, output) pairs is enough to replay a deterministic drafter exactly, with no model:
this is :mod:`specdec_guide.speculation`'s loop with the logged output standing in for the
target's greedy choices. The replay follows the loop step for step, as the CPU engine and
TensorRT-LLM run it:

- the first (context) step of a request has no draft; the drafter is asked only in the
  generation phase, and never for more than ``min(max_draft_len, budget - 1)`` tokens (the
  target adds one token of its own per step);
- each step emits the accepted prefix of the draft plus the target's own next token, and ends
  the request at the end-of-sequence token;
- requests run one after another in log order, so with ``is_public_pool`` (TensorRT-LLM's
  default) what one request generated can be drafted for the next: order matters.

Counts go into :class:`speculation.SpecStats` (drafted, accepted, acceptance rate, acceptance
length = tokens per target step). The predicted speed-up is :mod:`specdec_guide.payoff`'s cost model,
priced by default: the draft's cost per draft token (0 for NGram), verification at the batch size
(1 by default) from the stored measurement, and the overlap scheduler's tax for the methods the
release runs without it (NGram among them); ``--no-verify-cost`` and ``--no-overlap-cost`` leave
either out. A log replay gives two readings, shown as a range: the formula at the measured per-token
acceptance ``a`` (accepted / (accepted + rejected steps), printed as ``tok_accept``) with
``max_draft_len`` drafts on every step, ``(1 - a^(k+1)) / (1 - a) / (k*c + v)``, and the replay's own
tokens per step over ``v + c * drafted tokens per step``; each is then divided by the overlap tax's
high and low end. Without a log, ``--acceptance-length``, ``--acceptance-rate`` or ``--per-position``
give a measured acceptance figure for any method (``--method``), and the same costs price it.
"""

from __future__ import annotations

import argparse
import inspect
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from specdec_guide import payoff
from specdec_guide.diagnostics import UserError
from specdec_guide.payoff import DEFAULT_VERIFY_TABLE, VerifyCost, VerifyTable  # noqa: F401 (estimate's API)

DEFAULT_DRAFT_LENS = (1, 2, 3, 4, 6, 8)
DEFAULT_NGRAM_SIZES = (1, 2, 3, 4)
NGRAM_KEYS = ("max_draft_len", "max_matching_ngram_size", "is_keep_all", "is_use_oldest", "is_public_pool")


@dataclass(frozen=True)
class NGramSettings:
    """The NGram keys of ``speculative_config`` (TensorRT-LLM's NGramDecodingConfig)."""

    max_draft_len: int = 4
    max_matching_ngram_size: int = 2
    is_keep_all: bool = True
    is_use_oldest: bool = True
    is_public_pool: bool = True

    def drafter(self):
        from specdec_guide.drafters.ngram import NGramDrafter

        return NGramDrafter(self.max_draft_len, self.max_matching_ngram_size, self.is_keep_all,
                            self.is_use_oldest, self.is_public_pool)

    def label(self) -> str:
        return ", ".join(f"{k}={getattr(self, k)}" for k in NGRAM_KEYS)


@dataclass
class RequestResult:
    where: str
    prompt_tokens: int
    stats: "SpecStats"
    logged: tuple[int, int] | None = None  # the server's own counters, when the log has them


@dataclass
class Estimate:
    """The replay of one drafter setting over a whole log."""

    label: str
    max_draft_len: int
    draft_cost: float
    requests: list[RequestResult] = field(default_factory=list)
    verify_cost: float = 1.0  # the pass checking max_draft_len + 1 tokens, in plain steps
    tax: tuple[float, float] = (0.0, 0.0)  # the overlap scheduler's tax per step (payoff), low and high

    @property
    def total(self):
        return combine(r.stats for r in self.requests)

    def speedup(self, stats=None) -> tuple[float, float]:
        return speedup_range(stats if stats is not None else self.total, self.max_draft_len, self.draft_cost,
                             self.verify_cost, self.tax)


def combine(stats_iter):
    """Add up several requests' :class:`SpecStats`."""
    from specdec_guide.speculation_types import SpecStats

    total = SpecStats()
    for s in stats_iter:
        total.target_steps += s.target_steps
        total.drafted_tokens += s.drafted_tokens
        total.accepted_tokens += s.accepted_tokens
        total.rejections += s.rejections
        total.acceptance_lengths.extend(s.acceptance_lengths)
    return total


def speedup_range(stats, max_draft_len: int, draft_cost: float, verify_cost: float = 1.0,
                  tax: tuple[float, float] = (0.0, 0.0)) -> tuple[float, float]:
    """(low, high) of the two speed-up readings described in the module docstring.

    ``verify_cost`` 1, no tax and the formula reading are :func:`payoff.expected_speedup`; the draft's
    own cost ``k * c`` is added to the verification's ``v``, both in plain target steps.
    """
    if not stats.target_steps:
        return payoff.speedup_range((1.0 / verify_cost,), tax)
    formula = payoff.expected_speedup(stats.per_token_acceptance, max_draft_len, draft_cost, verify_cost)
    drafted_per_step = stats.drafted_tokens / stats.target_steps
    replayed = stats.mean_acceptance_length / (verify_cost + draft_cost * drafted_per_step)
    return payoff.speedup_range((formula, replayed), tax)


# -- the replay -------------------------------------------------------------------------------
def replay_request(request, drafter, max_draft_len: int, request_id: int):
    """Replay one logged request; return its :class:`SpecStats`.

    The loop of :func:`speculation.speculative_steps` with ``out`` as the target's greedy
    choices: its budget rule, its end-of-sequence rule, and the engine's no-draft context step.
    """
    from specdec_guide.speculation_types import DraftRequest, SpecStats, StepResult

    prompt, out = request.prompt_ids, request.output_ids
    # Unknown budget: a request that ran out of budget had exactly len(out); one that stopped by
    # itself had more, so its last drafts are not cut (a budget larger than any draft).
    max_tokens = request.max_tokens or (len(out) + max_draft_len + 1 if request.finish_reason == "stop"
                                        else len(out))
    stats = SpecStats()
    if hasattr(drafter, "start_request"):
        drafter.start_request(request_id, len(prompt), max_tokens)
    try:
        produced = 0
        while produced < len(out):
            budget = max_tokens - produced
            draft: list[int] = []
            if produced > 0 and max_draft_len > 0 and budget > 1:  # generation phase only
                limit = min(max_draft_len, budget - 1)
                ask = DraftRequest(request_id, list(prompt) + out[:produced], len(prompt), limit)
                draft = [int(t) for t in drafter.propose(ask)][:limit]
            expected = out[produced:]
            accepted = 0
            while accepted < len(draft) and accepted < len(expected) and draft[accepted] == expected[accepted]:
                accepted += 1
            # Greedy accept rule: the matching prefix, then the target's own token (none left when
            # the draft ran to the logged end, which only an accepted end-of-sequence token can do).
            emitted = expected[: accepted + 1]
            stats.add(StepResult(emitted, len(draft), accepted))
            produced += len(emitted)
    finally:
        if hasattr(drafter, "end_request"):
            drafter.end_request(request_id)
    return stats


def replay(requests, drafter, max_draft_len: int, label: str, draft_cost: float = 0.0,
           verify_cost: float = 1.0, tax: tuple[float, float] = (0.0, 0.0)) -> Estimate:
    """Replay every request in log order with one drafter (its pool carries across requests)."""
    est = Estimate(label, max_draft_len, draft_cost, verify_cost=verify_cost, tax=tax)
    for request_id, request in enumerate(requests, 1):
        try:
            stats = replay_request(request, drafter, max_draft_len, request_id)
        except Exception as err:  # a user drafter's bug: say where, without a traceback
            raise UserError(f"{request.where}:1: the drafter failed on this request: {type(err).__name__}: {err}") from None
        est.requests.append(RequestResult(request.where, len(request.prompt_ids), stats, request.logged))
    return est


def user_drafter(spec: str, max_draft_len: int, eos_id: int | None):
    """A drafter class from ``path.py:Class`` (or ``module:Class``): our ``propose`` protocol, or a
    TensorRT-LLM-style ``prepare_draft_tokens`` drafter run through the CPU engine's adapter."""
    from specdec_guide.drafters.user_provided import build_user_drafter, load_drafter_class

    try:
        cls = load_drafter_class(spec)
        if callable(getattr(cls, "prepare_draft_tokens", None)):
            return build_user_drafter(spec, max_draft_len, end_id=eos_id)
        if not callable(getattr(cls, "propose", None)):
            raise ValueError(f"{cls.__name__} has neither prepare_draft_tokens(scheduled_requests, "
                             "resource_manager=None) nor propose(request)")
        params = inspect.signature(cls).parameters
        takes_len = "max_draft_len" in params or any(p.kind is p.VAR_KEYWORD for p in params.values())
        return cls(max_draft_len=max_draft_len) if takes_len else cls()
    except Exception as err:  # import errors, a failing constructor: one line, never a traceback
        raise UserError(f"--drafter {spec}: {type(err).__name__}: {err}") from None


def sweep(requests, base: NGramSettings, draft_lens, ngram_sizes, draft_cost: float,
          verify: Callable[[int], VerifyCost] | None = None,
          tax: tuple[float, float] = (0.0, 0.0)) -> list[Estimate]:
    """Every setting of the grid; ``verify(k)`` gives the verification cost of each draft length."""
    from dataclasses import replace

    out = []
    for n in ngram_sizes:
        for k in draft_lens:
            s = replace(base, max_draft_len=k, max_matching_ngram_size=n)
            out.append(replay(requests, s.drafter(), k, s.label(), draft_cost,
                              verify(k).factor if verify else 1.0, tax))
    return out


def best(estimates: list[Estimate]) -> Estimate:
    """Highest predicted speed-up (low end of the range); ties go to the shorter draft."""
    return max(estimates, key=lambda e: (round(e.speedup()[0], 6), -e.max_draft_len))


# -- reading settings -------------------------------------------------------------------------
def _key_position(text: str, *keys: str) -> str:
    """``line:col`` of the innermost of ``keys`` the YAML holds (``1:1`` when none)."""
    from specdec_guide.diagnostics import yaml_key_position

    return "%d:%d" % yaml_key_position(text, *keys)


def settings_from_yaml(path: Path) -> NGramSettings:
    """The NGram keys of ``speculative_config`` in a model.yaml or extra-options YAML."""
    import yaml

    from specdec_guide.diagnostics import read_utf8, yaml_position

    text = read_utf8(path)
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as err:
        line, col = yaml_position(err)
        raise UserError(f"{path}:{line}:{col}: invalid YAML: {getattr(err, 'problem', None) or err}") from None
    except RecursionError:
        raise UserError(f"{path}:1:1: invalid YAML: nested too deeply") from None
    spec = data.get("speculative_config") if isinstance(data, dict) else None
    if not isinstance(spec, dict):
        raise UserError(f"{path}:{_key_position(text, 'speculative_config')}: no speculative_config mapping to read "
                        "the NGram keys from")
    if spec.get("decoding_type") != "NGram":
        raise UserError(f"{path}:{_key_position(text, 'speculative_config', 'decoding_type')}: "
                        f"speculative_config.decoding_type is {spec.get('decoding_type')!r}; estimate "
                        "replays NGram (use --drafter for another deterministic drafter)")
    values = {}
    for key in NGRAM_KEYS:
        if key in spec:
            want = int if key.startswith("max_") else bool
            v = spec[key]
            if not isinstance(v, want) or (want is int and (isinstance(v, bool) or v < 1)):
                raise UserError(f"{path}:{_key_position(text, 'speculative_config', key)}: speculative_config.{key}: "
                                f"expected {'a positive integer' if want is int else 'true or false'}, got {v!r}")
            values[key] = v
    return NGramSettings(**values)


def _int_list(text: str) -> tuple[int, ...]:
    try:
        values = tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"expected positive integers, got {text!r}")
    return values


def _bool(text: str) -> bool:
    if text.lower() in ("true", "1", "yes"):
        return True
    if text.lower() in ("false", "0", "no"):
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _finite(text: str) -> float | None:
    """The number ``text`` holds, or None for text that is not a finite number."""
    try:
        value = float(text)
    except ValueError:
        return None
    return value if -float("inf") < value < float("inf") else None


def _verify(text: str) -> float:
    value = _finite(text)
    if value is None or not value > 0.0:
        raise argparse.ArgumentTypeError(f"expected a number > 0 (the pass that checks k + 1 tokens, in plain "
                                         f"steps), got {text!r}")
    return value


def _cost(text: str) -> float:
    value = _finite(text)
    if value is None or not value >= 0.0:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {text!r}")
    return value


# -- output -----------------------------------------------------------------------------------
def _row(name: str, stats, rng: tuple[float, float]) -> list[str]:
    return [name, str(stats.target_steps), str(stats.generated_tokens), str(stats.drafted_tokens),
            str(stats.accepted_tokens), f"{stats.acceptance_rate:.3f}", f"{stats.per_token_acceptance:.3f}",
            f"{stats.mean_acceptance_length:.3f}", f"{rng[0]:.2f}-{rng[1]:.2f}x"]


def _table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    fmt = lambda r: "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))
    return "\n".join([fmt(header), *(fmt(r) for r in rows)])


# accept_rate: accepted / drafted (TensorRT-LLM's acceptance_rate); tok_accept: accepted / (accepted +
# steps whose draft had a rejection), the per-token acceptance the formula end of the speed-up takes.
HEADER = ["record", "steps", "tokens", "drafted", "accepted", "accept_rate", "tok_accept", "accept_len", "speed-up"]


def report(est: Estimate, per_request: bool = True, compare: bool = True) -> str:
    rows = []
    if per_request:
        rows = [_row(r.where, r.stats, est.speedup(r.stats)) for r in est.requests]
    rows.append(_row(f"all {len(est.requests)} requests", est.total, est.speedup()))
    return _table(HEADER, rows) + (_logged_line(est) if compare else "")


def _logged_line(est: Estimate) -> str:
    """Compare with the counters the server logged (meaningful when it ran the same drafter settings)."""
    logged = [r.logged for r in est.requests]
    if any(x is None for x in logged):
        return ""
    drafted, accepted = sum(x[0] for x in logged), sum(x[1] for x in logged)
    if drafted == accepted == 0 and est.total.drafted_tokens > 0:
        # What the llmapi model of TensorRT-LLM 1.1.0 and 1.2.1 logs with TorchSampler (PR #17082):
        # nothing to compare with, and not a sign of other settings.
        return ("\nlogged by the server: drafted 0, accepted 0 on every request: its counters were not filled "
                "(TensorRT-LLM 1.1.0 and 1.2.1 leave them at zero with TorchSampler, fixed by PR #17082); "
                "the replay above is the acceptance figure")
    differ = [r.where for r in est.requests if r.logged != (r.stats.drafted_tokens, r.stats.accepted_tokens)]
    verdict = ("the replay equals them on every request" if not differ else
               f"the replay differs on {len(differ)} request(s), first {differ[0]}: the server ran other "
               "settings, sampled, or its tokenizer splits the output differently")
    return f"\nlogged by the server: drafted {drafted}, accepted {accepted}; {verdict}"


def sweep_report(estimates: list[Estimate], show_verify: bool = False) -> str:
    """One row per setting; ``k`` and ``n`` are max_draft_len and max_matching_ngram_size (short, so
    that the table fits a page), ``verify`` each row's verification cost when it varies with k."""
    header = ["k", "n", *HEADER[1:-1], *(["verify"] if show_verify else []), HEADER[-1]]
    rows = []
    for e in estimates:
        s = dict(kv.split("=") for kv in e.label.split(", "))
        cells = _row("", e.total, e.speedup())[1:]
        rows.append([s["max_draft_len"], s["max_matching_ngram_size"], *cells[:-1],
                     *([f"{e.verify_cost:.3f}"] if show_verify else []), cells[-1]])
    return _table(header, rows)


def as_json(est: Estimate) -> dict:
    def one(stats, rng):
        return {"target_steps": stats.target_steps, "tokens": stats.generated_tokens,
                "drafted": stats.drafted_tokens, "accepted": stats.accepted_tokens,
                "acceptance_rate": stats.acceptance_rate, "acceptance_length": stats.mean_acceptance_length,
                "per_token_acceptance": stats.per_token_acceptance, "speedup_range": list(rng)}

    return {"drafter": est.label, "draft_cost": est.draft_cost, "verify_cost": est.verify_cost,
            "requests": [{"record": r.where, **one(r.stats, est.speedup(r.stats)),
                          **({"logged": {"drafted": r.logged[0], "accepted": r.logged[1]}} if r.logged else {})}
                         for r in est.requests],
            "overall": one(est.total, est.speedup())}


def plot(path: Path, est: Estimate | None = None, estimates: list[Estimate] | None = None) -> None:  # pragma: no mutate block (a drawing)
    try:
        import matplotlib
    except ImportError:
        raise UserError("--plot needs matplotlib (it comes with the package's docs extra)") from None

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    if estimates:
        by_n: dict[str, list[tuple[int, float]]] = {}
        for e in estimates:
            s = dict(kv.split("=") for kv in e.label.split(", "))
            by_n.setdefault(s["max_matching_ngram_size"], []).append((e.max_draft_len, e.total.mean_acceptance_length))
        for n, points in sorted(by_n.items()):
            points.sort()
            ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=f"max_matching_ngram_size={n}")
        ax.set(xlabel="max_draft_len", ylabel="acceptance length (tokens per target step)",
               title="NGram on the logged traffic")
        ax.legend()
    else:
        lengths = [r.stats.mean_acceptance_length for r in est.requests]
        ax.bar(range(1, len(lengths) + 1), lengths, color="tab:green")
        ax.axhline(est.total.mean_acceptance_length, color="black", linewidth=0.8, label="all requests")
        ax.set(xlabel="request (log order)", ylabel="acceptance length", title=est.label)
        ax.legend()
    fig.tight_layout()
    try:
        fig.savefig(path, dpi=100)
    except OSError as err:
        raise UserError(f"--plot {path}: cannot write: {err.strerror or err}") from None
    finally:
        plt.close(fig)


# -- the command ------------------------------------------------------------------------------
def default_tokenizer() -> Path:
    """The real model's checkpoint directory (fetched and converted once, then cached)."""
    try:
        from specdec_guide.models.smollm2 import ensure_checkpoint
    except ImportError:
        raise UserError("no --tokenizer given and the real model's package is not available: "
                        "give a local Hugging Face tokenizer directory with --tokenizer") from None
    return ensure_checkpoint()


def _step_costs(args: argparse.Namespace, form_id: str, replay: bool = False):
    """k -> (c, its source, verification, tax, counted) for the command's flags (payoff.costs).

    A replayed drafter class has no figure of its own cost: it is taken as a host-side drafter (0),
    and the output says so."""
    if args.verify_table is not None and (args.verify_cost is not None or args.no_verify_cost):
        raise UserError("--verify-table is read only when verification is looked up (--batch-size, the default)")
    table = payoff.verify_table(args.verify_table or DEFAULT_VERIFY_TABLE)
    batch = args.batch_size or 1

    def at(k: int):
        draft_cost, source = args.draft_cost, "given"
        if draft_cost is None and replay and form_id == "user_provided":
            draft_cost, source = 0.0, "assumed 0, a drafter on the host: give --draft-cost for one that runs a model"
        return payoff.costs(form_id, k, batch, draft_cost=draft_cost, draft_cost_source=source,
                            verify_cost=args.verify_cost,
                            count_verify=not args.no_verify_cost, count_overlap=not args.no_overlap_cost,
                            table=table)

    return at


def _costs_lines(counted: tuple[str, ...], verify: VerifyCost) -> str:
    lines = ["costs in plain target steps, counted:", *(f"  {c}" for c in counted)]
    if verify.measured_on:
        lines.append(f"verification measured on {verify.measured_on}")
    return "\n".join(lines)


def _acceptance_figure(args: argparse.Namespace) -> tuple[str, object] | None:
    given = [(kind, v) for kind, v in (("length", args.acceptance_length), ("rate", args.acceptance_rate),
                                        ("per_position", args.per_position)) if v is not None]
    if len(given) > 1:
        raise UserError("give one of --acceptance-length, --acceptance-rate, --per-position")
    return given[0] if given else None


def run_figure(args: argparse.Namespace, kind: str, value) -> int:
    """A measured acceptance figure, for any method: no log, no model."""
    if args.log or args.sweep or args.drafter or args.config or args.plot:
        raise UserError("an acceptance figure replaces the log: drop LOG, --sweep, --drafter, --config and --plot")
    form = payoff.form(args.method or "ngram")
    k = args.max_draft_len or (len(value) if kind == "per_position" else None)
    if k is None:
        raise UserError("give --max-draft-len K with an acceptance figure")
    tokens = payoff.acceptance_length(kind, value, k)
    c, _, verify, tax, counted = _step_costs(args, form.id)(k)
    p = payoff.predict(tokens, k, c, verify, tax, counted)
    if args.json:
        print(json.dumps({"method": form.id, "batch_size": args.batch_size or 1, "acceptance_length": tokens,
                          **p.as_json()}, indent=2))
        return 0
    if kind == "length":
        shown = f"acceptance length {tokens:.3f}"
    elif kind == "rate":
        shown = f"acceptance rate {value:g} -> acceptance length {tokens:.3f} (1 + rate x {k})"
        if value == 0:
            shown += ("; note: TensorRT-LLM 1.1.0 and 1.2.1 report 0 per request with their default sampler "
                      "whatever was accepted: measure acceptance another way (snippets/acceptance/check_acceptance.py)")
    else:
        shown = f"per-position acceptance {', '.join(f'{a:g}' for a in value)} -> acceptance length {tokens:.3f}"
    print(f"{form.label}, max_draft_len {k}, batch size {args.batch_size or 1}; {shown}")
    print(_costs_lines(counted, verify))
    step = k * c + verify.factor
    ends = f"{p.low:.2f}x" if p.low == p.high else f"{p.low:.2f}-{p.high:.2f}x"
    taxed = "" if tax == (0.0, 0.0) else f", divided by {1 + tax[1]:.2f} (low end) and {1 + tax[0]:.2f} (high end)"
    print(f"predicted speed-up: {ends} = {tokens:.3f} / ({k} x {c:.3f} + {verify.factor:.3f}){taxed}; "
          f"step cost {step:.3f}")
    return 0


def run(args: argparse.Namespace) -> int:
    from specdec_guide.traffic_log import load_tokenizer, read_log

    figure = _acceptance_figure(args)
    if figure is not None:
        return run_figure(args, *figure)
    if args.log is None:
        raise UserError("give a LOG to replay, or an acceptance figure (--acceptance-length, --acceptance-rate, "
                        "--per-position) with --method")
    if args.method and args.method != ("user_provided" if args.drafter else "ngram"):
        raise UserError("a log replay runs NGram, or your --drafter (user_provided): --method is for an acceptance "
                        "figure")
    settings = settings_from_yaml(args.config) if args.config else NGramSettings()
    overrides = {k: getattr(args, k) for k in NGRAM_KEYS if getattr(args, k) is not None}
    from dataclasses import replace

    settings = replace(settings, **overrides)
    if args.drafter and args.sweep:
        raise UserError("--sweep tries NGram settings; it cannot be combined with --drafter")
    step_costs = _step_costs(args, "user_provided" if args.drafter else "ngram", replay=True)
    # Refuse a batch size, draft length or missing draft cost before the (slow) replay.
    for k in (args.draft_lens if args.sweep else (settings.max_draft_len,)):
        step_costs(k)
    tokenizer = load_tokenizer(args.tokenizer or default_tokenizer())
    requests = read_log(args.log, tokenizer)
    if args.sweep:
        c, _, v, tax, counted = step_costs(args.draft_lens[0])
        estimates = sweep(requests, settings, args.draft_lens, args.ngram_sizes, c, lambda k: step_costs(k)[2], tax)
        top = best(estimates)
        print(f"{len(requests)} requests from {args.log}; NGram is_keep_all={settings.is_keep_all}, "
              f"is_use_oldest={settings.is_use_oldest}, is_public_pool={settings.is_public_pool}")
        varies = args.verify_cost is None and not args.no_verify_cost
        if varies:
            counted = tuple(f"verification per row, column verify (at batch {args.batch_size or 1}, k + 1 tokens "
                            "checked)" if x.startswith("verification ") else x for x in counted)
        print(_costs_lines(counted, v))
        print("k = max_draft_len, n = max_matching_ngram_size")
        print(sweep_report(estimates, show_verify=varies))
        lo, hi = top.speedup()
        print(f"best: {top.label} (acceptance length {top.total.mean_acceptance_length:.3f}, "
              f"predicted speed-up {lo:.2f}-{hi:.2f}x)")
        if args.plot:
            plot(args.plot, estimates=estimates)
        return 0
    if args.drafter:
        drafter = user_drafter(args.drafter, settings.max_draft_len, tokenizer.eos_token_id)
        label = f"{args.drafter}, max_draft_len={settings.max_draft_len}"
    else:
        drafter, label = settings.drafter(), f"NGram {settings.label()}"
    c, _, v, tax, counted = step_costs(settings.max_draft_len)
    est = replay(requests, drafter, settings.max_draft_len, label, c, v.factor, tax)
    if args.json:
        print(json.dumps({**as_json(est), "verify_cost_source": v.source, "overlap_tax": list(tax),
                          "counted": list(counted),
                          **({"verify_cost_measured_on": v.measured_on} if v.measured_on else {})}, indent=2))
    else:
        print(f"{len(requests)} requests from {args.log}; {label}")
        print(_costs_lines(counted, v))
        # The server's counters describe its own drafter: compare only when replaying NGram.
        print(report(est, per_request=not args.summary, compare=not args.drafter))
    if args.plot:
        plot(args.plot, est=est)
    return 0


def _fractions(text: str) -> tuple[float, ...]:
    try:
        values = tuple(float(x) for x in text.split(","))  # an empty item is an error, not skipped
    except ValueError:
        values = ()
    if not values or any(not 0.0 <= v <= 1.0 for v in values):
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers between 0 and 1, got {text!r}")
    return values


def _number(text: str) -> float:
    value = _finite(text)
    if value is None:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}")
    return value


def register(subparsers) -> argparse.ArgumentParser:  # pragma: no mutate block (help prose)
    p = subparsers.add_parser(
        "estimate",
        help="predict NGram (or your drafter's) acceptance on logged requests, with no model",
        description="Replay a drafter over logged (prompt, output) pairs, in log order, and report per "
                    "request and overall: target steps, tokens, drafted, accepted, acceptance rate, acceptance "
                    "length and a predicted speed-up range. Exact for greedy decoding: a draft token is "
                    "accepted iff it equals the logged next token. LOG is JSONL: {prompt|messages, output}, "
                    "OpenAI {request, response} pairs, or Triton /generate {text_input, text_output}. "
                    "The speed-up divides tokens per step by the step's cost in plain decoding steps: the "
                    "draft's (--draft-cost per draft token) plus the verification's (--verify-cost, or "
                    "looked up for --batch-size in a stored measurement).",
    )
    p.add_argument("log", type=Path, metavar="LOG", nargs="?",
                   help="JSONL file, one logged request per line (or give an acceptance figure instead)")
    p.add_argument("--tokenizer", metavar="DIR",
                   help="local Hugging Face tokenizer directory (default: the real model's, SmolLM2-135M-Instruct)")
    p.add_argument("--config", type=Path, metavar="YAML",
                   help="read the NGram keys from speculative_config of a model.yaml or extra-options YAML")
    p.add_argument("--max-draft-len", dest="max_draft_len", type=_positive, metavar="K",
                   help="speculative_config.max_draft_len (default 4 for a log replay; an acceptance figure needs it)")
    p.add_argument("--max-matching-ngram-size", dest="max_matching_ngram_size", type=_positive, metavar="N",
                   help="speculative_config.max_matching_ngram_size (default 2)")
    p.add_argument("--is-keep-all", dest="is_keep_all", type=_bool, metavar="BOOL", help="default true")
    p.add_argument("--is-use-oldest", dest="is_use_oldest", type=_bool, metavar="BOOL", help="default true")
    p.add_argument("--is-public-pool", dest="is_public_pool", type=_bool, metavar="BOOL",
                   help="default true: one pool for all requests, carried across the log in its order")
    p.add_argument("--drafter", metavar="FILE.py:CLASS",
                   help="replay this drafter class instead of NGram (prepare_draft_tokens or propose)")
    p.add_argument("--method", choices=[f.id for f in payoff.forms()], metavar="METHOD",
                   help="with an acceptance figure: the method and form to price (%(choices)s; default ngram); a "
                        "log replay is ngram, or user_provided with --drafter")
    p.add_argument("--acceptance-length", type=_number, metavar="L",
                   help="instead of a log: a measured mean acceptance length (tokens per target step)")
    p.add_argument("--acceptance-rate", type=_number, metavar="R",
                   help="instead of a log: a measured acceptance rate, accepted / drafted; TensorRT-LLM 1.1.0 and 1.2.1 "
                        "report a per-request acceptance_rate of 0 with their default sampler (counters not filled), "
                        "which is no acceptance figure")
    p.add_argument("--per-position", type=_fractions, metavar="A1,A2,...",
                   help="instead of a log: per-position acceptance, one figure per draft position")
    p.add_argument("--draft-cost", type=_cost, metavar="C",
                   help="cost of one draft token in target steps (default: the method's, methods.yaml: 0 for NGram, the "
                        "stored draft-pass measurement for Draft/Target; other methods must give it)")
    p.add_argument("--verify-cost", type=_verify, metavar="V",
                   help="cost of the target pass that checks max_draft_len + 1 tokens, in plain one-token steps "
                        "at your batch size (default: looked up at --batch-size)")
    p.add_argument("--batch-size", type=_positive, metavar="B",
                   help="batch size (or concurrency) to price verification and the draft pass at, from the stored "
                        "measurement (benchmarks/results/verify_cost.json: H200, random-weight Llama-3.1-8B-shaped "
                        "target in plain PyTorch, not TensorRT-LLM), interpolated between measured ones (default 1)")
    p.add_argument("--verify-table", type=Path, metavar="JSON",
                   help="a run of benchmarks/verify_cost.py on your own GPU instead of the stored one")
    p.add_argument("--no-verify-cost", action="store_true",
                   help="do not count verification: checking k + 1 tokens costs one plain step (the best case)")
    p.add_argument("--no-overlap-cost", action="store_true",
                   help="do not count the overlap scheduler, which NGram, Draft/Target, two-model EAGLE-3 and "
                        "user-provided drafters run without (default: a 5-10%% tax per step, SGLang's figures)")
    p.add_argument("--sweep", action="store_true", help="try a grid of max_draft_len x max_matching_ngram_size")
    p.add_argument("--draft-lens", type=_int_list, default=DEFAULT_DRAFT_LENS, metavar="LIST",
                   help="--sweep values of max_draft_len (default 1,2,3,4,6,8)")
    p.add_argument("--ngram-sizes", type=_int_list, default=DEFAULT_NGRAM_SIZES, metavar="LIST",
                   help="--sweep values of max_matching_ngram_size (default 1,2,3,4)")
    p.add_argument("--summary", action="store_true", help="print only the overall row")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--plot", type=Path, metavar="PNG", help="write a plot of the acceptance length")
    p.set_defaults(func=run)
    return p
