"""Does speculation pay: tokens per target step over what a speculative step costs.

One cost model, read by ``specdec-guide estimate`` and by the site's calculator
(``docs/assets/calculator.js`` mirrors :func:`predict` operation for operation; a browser test
compares the two on a grid). Every cost is counted in plain one-token decoding steps of the target
at the same batch size, and each one says where its figure comes from:

- the draft: ``k * c``, with ``c`` the cost of one draft token (0 for NGram's host-side pool; the
  stored draft-pass measurement for Draft/Target; the reader's own figure otherwise);
- verification: ``v``, the target pass that checks ``k + 1`` tokens per sequence, looked up at the
  batch size in a stored measurement (:class:`VerifyTable`; 1 when not counted);
- the overlap scheduler: a form that runs without it (NGram and user-provided drafters, which the
  release runs without it; Draft/Target and two-model EAGLE-3 as this guide configures them) pays a
  tax on every step, a range from ``schemas/overlap_cost.yaml``.

The speed-up is ``L / ((k * c + v) * (1 + tax))``, with ``L`` the acceptance length (tokens per
target step). An acceptance figure becomes ``L`` as follows: a mean acceptance length is ``L``; an
acceptance rate ``r`` (accepted / drafted, TensorRT-LLM's ``acceptance_rate``) with ``k`` drafts on
every step gives ``1 + r * k``; per-position acceptance ``a_1..a_k`` (the chance that position i is
accepted once the positions before it were) gives ``1 + a_1 + a_1 a_2 + ... + a_1 ... a_k``.
Only the standard library and PyYAML: the calculator's data comes from here at site build time.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from specdec_guide.diagnostics import UserError

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_VERIFY_TABLE = ROOT / "benchmarks" / "results" / "verify_cost.json"
OVERLAP_PATH = Path(__file__).resolve().parent / "schemas" / "overlap_cost.yaml"
ACCEPTANCE_KINDS = ("length", "rate", "per_position")


# -- the acceptance figure ---------------------------------------------------------------------
def expected_tokens_per_step(acceptance_rate: float, draft_len: int) -> float:
    """Expected tokens per target step, (1 - a^(k+1)) / (1 - a), for i.i.d. acceptance a.

    Leviathan et al. 2023, eq. 1; equals k + 1 at a = 1.
    """
    a, k = acceptance_rate, draft_len
    if a >= 1.0:
        return float(k + 1)
    return (1.0 - a ** (k + 1)) / (1.0 - a)


def expected_speedup(acceptance_rate: float, draft_len: int, draft_cost: float, verify_cost: float = 1.0) -> float:
    """Walltime improvement over plain decoding when one draft step costs ``draft_cost`` target steps.

    Leviathan et al. 2023, theorem 3.8: E[tokens per step] / (k * c + 1). ``verify_cost``: what the
    pass checking k + 1 tokens costs in plain steps, where it is not the theorem's 1.
    """
    return expected_tokens_per_step(acceptance_rate, draft_len) / (draft_len * draft_cost + verify_cost)


def per_token_acceptance_from_length(tokens_per_step: float, draft_len: int) -> float:
    """The per-token acceptance ``a`` whose :func:`expected_tokens_per_step` is ``tokens_per_step``.

    The inverse of eq. 1 (bisection; the formula grows with ``a``): turns a measured acceptance
    length (AIPerf's, vLLM's ``mean_acceptance_length``, SGLang's ``avg_spec_accept_length``)
    into the ``a`` that :func:`expected_speedup` takes.
    """
    if not 1.0 <= tokens_per_step <= draft_len + 1:
        raise ValueError(f"tokens per step must be between 1 and draft_len + 1 = {draft_len + 1}, got {tokens_per_step}")
    lo, hi = 0.0, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if expected_tokens_per_step(mid, draft_len) < tokens_per_step else (lo, mid)
    return (lo + hi) / 2


def acceptance_length(kind: str, value, draft_len: int) -> float:
    """Tokens per target step from an acceptance figure (module docstring); bad input is a UserError."""
    k = draft_len
    if kind == "length":
        if not 1.0 <= value <= k + 1:
            raise UserError(f"an acceptance length is between 1 and max_draft_len + 1 = {k + 1}, got {value:g}")
        return float(value)
    if kind == "rate":
        if not 0.0 <= value <= 1.0:
            raise UserError(f"an acceptance rate (accepted / drafted) is between 0 and 1, got {value:g}")
        return 1.0 + value * k
    if kind == "per_position":
        values = list(value)
        if len(values) != k:
            raise UserError(f"per-position acceptance needs one figure per draft position: {k} for max_draft_len "
                            f"{k}, got {len(values)}")
        if any(not 0.0 <= a <= 1.0 for a in values):
            raise UserError("each per-position acceptance is between 0 and 1")
        total, reach = 1.0, 1.0
        for a in values:
            reach = reach * a
            total = total + reach
        return total
    raise UserError(f"unknown acceptance kind {kind!r}; one of {', '.join(ACCEPTANCE_KINDS)}")


# -- verification and the draft pass: the stored measurement ------------------------------------
@dataclass(frozen=True)
class VerifyCost:
    """What the pass checking k + 1 tokens costs, in plain steps, and where the figure comes from."""

    factor: float
    source: str  # how it was obtained
    measured_on: str = ""  # the stored measurement's conditions, when it comes from one


def _lerp(lo_x: float, hi_x: float, lo_y: float, hi_y: float, x: float) -> float:
    """Linear interpolation, written once: calculator.js does the same operations in the same order."""
    return lo_y if lo_x == hi_x else lo_y + (hi_y - lo_y) * (x - lo_x) / (hi_x - lo_x)


class VerifyTable:
    """Verification cost per (batch size, tokens checked) from a run of ``benchmarks/verify_cost.py``.

    The factor is the time of a target pass scoring ``q = k + 1`` tokens per sequence over that of
    a one-token pass at the same batch size. A batch size or ``q`` between two measured ones is
    interpolated linearly; outside the measured ones is refused (no extrapolation). The draft rows
    (one-token passes of the draft model) give the draft pass as a share of the target's.
    """

    def __init__(self, path: Path):
        from specdec_guide.diagnostics import read_utf8

        self.path = path
        text = read_utf8(path)  # an unreadable file is already a path:line:col UserError
        try:
            data = json.loads(text)
        except json.JSONDecodeError as err:
            raise UserError(f"{path}:{err.lineno}:{err.colno}: invalid JSON: {err.msg}") from None
        rows = data.get("target") if isinstance(data, dict) else None
        ms: dict[int, dict[int, float]] = {}
        for row in rows if isinstance(rows, list) else []:
            try:
                b, q, t = int(row["batch"]), int(row["q"]), float(row["ms"])
            except (TypeError, KeyError, ValueError):
                ms = {}
                break
            ms.setdefault(b, {})[q] = t
        if not ms or any(1 not in by_q or by_q[1] <= 0 for by_q in ms.values()):
            raise UserError(f"{path}:1:1: expected a 'target' list of {{batch, q, ms}} rows with a q = 1 row per "
                            "batch, as benchmarks/verify_cost.py writes")
        self.ratio = {b: {q: t / by_q[1] for q, t in by_q.items()} for b, by_q in ms.items()}
        self.draft_share: dict[int, float] = {}
        for row in data.get("draft") or []:
            if isinstance(row, dict) and row.get("q") == 1 and row.get("batch") in ms:
                self.draft_share[int(row["batch"])] = float(row["ms"]) / ms[int(row["batch"])][1]
        machine = data.get("machine", {}) if isinstance(data.get("machine"), dict) else {}
        shape = (data.get("shapes", {}).get("target", {}) if isinstance(data.get("shapes"), dict) else {})
        # The stored one by its place in the clone (the walked page prints no machine's own path).
        self.name = "benchmarks/results/verify_cost.json" if path == DEFAULT_VERIFY_TABLE else str(path)
        self.what = (f"{self.name}: {machine.get('device', 'unknown GPU')}, random-weight "
                     f"{shape.get('name', 'Llama')}-shaped target, plain PyTorch with CUDA graphs, "
                     f"{data.get('date', 'undated')}; not TensorRT-LLM")

    def _between(self, points: list[int], x: int, what: str, yours: str = "--verify-cost") -> tuple[int, int]:
        if x < points[0] or x > points[-1]:
            raise UserError(f"{self.name}: {what} {x} is outside the measured {points[0]}-{points[-1]}; give "
                            f"{yours} instead")
        return max(p for p in points if p <= x), min(p for p in points if p >= x)

    def _at_batch(self, batch: int, q: int) -> float:
        r = self.ratio[batch]
        lo, hi = self._between(sorted(r), q, "max_draft_len + 1 =")
        return _lerp(lo, hi, r[lo], r[hi], q)

    def cost(self, batch: int, max_draft_len: int) -> VerifyCost:
        q = max_draft_len + 1
        lo, hi = self._between(sorted(self.ratio), batch, "batch size")
        factor = _lerp(lo, hi, self._at_batch(lo, q), self._at_batch(hi, q), batch)
        between = [f"batch between measured {lo} and {hi}"] if lo != hi else []
        qs = sorted(self.ratio[lo])
        if q not in qs:
            between.append(f"tokens between measured {max(x for x in qs if x <= q)} and {min(x for x in qs if x >= q)}")
        how = "interpolated: " + ", ".join(between) if between else "both measured"
        return VerifyCost(factor, f"at batch {batch}, {q} tokens checked; {how}", self.what)

    def draft_cost(self, batch: int) -> float:
        """One draft pass over one target one-token pass at ``batch`` (interpolated between measured ones)."""
        points = sorted(self.draft_share)
        if not points:
            raise UserError(f"{self.path}:1:1: no 'draft' rows to read a draft pass from")
        lo, hi = self._between(points, batch, "batch size", "--draft-cost")
        return _lerp(lo, hi, self.draft_share[lo], self.draft_share[hi], batch)

    def as_data(self) -> dict:
        """What the calculator needs, as JSON-able data (keys are strings in JSON: lists instead)."""
        return {"what": self.what, "name": self.name,
                "target": [[b, [[q, r] for q, r in sorted(by_q.items())]] for b, by_q in sorted(self.ratio.items())],
                "draft": [[b, s] for b, s in sorted(self.draft_share.items())]}


@lru_cache(maxsize=4)
def verify_table(path: Path = DEFAULT_VERIFY_TABLE) -> VerifyTable:
    return VerifyTable(path)


# -- the overlap scheduler and the methods' forms ----------------------------------------------
@dataclass(frozen=True)
class OverlapTax:
    low: float
    high: float
    source: str
    urls: tuple[str, ...] = ()


@lru_cache(maxsize=1)
def overlap_tax() -> OverlapTax:
    from specdec_guide.diagnostics import load_yaml_file

    data = load_yaml_file(OVERLAP_PATH, "the overlap-scheduler cost") or {}
    tax = data.get("tax") if isinstance(data, dict) else None
    try:
        low, high = float(tax["low"]), float(tax["high"])
        urls = [data["sources"][k]["url"] for k in tax["source"]]
    except (TypeError, KeyError, ValueError):
        raise UserError(f"{OVERLAP_PATH}:1:1: expected tax: {{low, high, source: [keys of sources]}}") from None
    if not 0.0 <= low <= high:
        raise UserError(f"{OVERLAP_PATH}:1:1: tax needs 0 <= low <= high")
    return OverlapTax(low, high, "TensorRT-LLM's one figure to SGLang's, the same at every batch size: "
                      "src/specdec_guide/schemas/overlap_cost.yaml", tuple(urls))


# Why a form runs without the overlap scheduler (methods.yaml's cost.forms[].why), in the output's words.
WITHOUT_OVERLAP = {"release": "the release turns it off",
                   "guide_config": "as this guide configures it, disable_overlap_scheduler: true; "
                                   "--no-overlap-cost if yours keeps it"}


@dataclass(frozen=True)
class Form:
    """One way of setting a method up, as the cost model sees it."""

    id: str
    label: str
    method: str
    overlap_scheduler: bool  # kept on (False: the step pays the overlap tax)
    why: str | None  # without it because of the release, or of this guide's configuration (guide_config)
    draft_cost: float | str | None  # a number, "draft_pass" or None (the reader gives it)
    draft_cost_source: str


def forms() -> tuple[Form, ...]:
    """Every form of every speculative method in methods.yaml (its ``cost`` block), in order."""
    from specdec_guide.releases import methods

    out = []
    for m in methods.load():
        cost = m.cost or {}
        for f in cost.get("forms") or []:
            out.append(Form(f["id"], f["label"], m.id, bool(f["overlap_scheduler"]), f.get("why"),
                            cost.get("draft_cost"), cost.get("draft_cost_source", "")))
    return tuple(out)


def form(form_id: str) -> Form:
    for f in forms():
        if f.id == form_id:
            return f
    raise UserError(f"unknown method {form_id!r}; choose one of: {', '.join(f.id for f in forms())}")


# -- the prediction ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Prediction:
    """The predicted speed-up range and every term that went into it."""

    low: float
    high: float
    readings: tuple[float, ...]  # tokens per step over the step's cost, before the overlap tax
    draft_len: int
    draft_cost: float
    verify: VerifyCost
    tax: tuple[float, float]  # (low, high); (0, 0) when not counted
    counted: tuple[str, ...]  # the costs counted, in words

    def as_json(self) -> dict:
        return {"speedup_range": [self.low, self.high], "readings": list(self.readings),
                "draft_len": self.draft_len, "draft_cost": self.draft_cost, "verify_cost": self.verify.factor,
                "verify_cost_source": self.verify.source, "overlap_tax": list(self.tax), "counted": list(self.counted)}


def speedup_range(readings, tax: tuple[float, float]) -> tuple[float, float]:
    """(low, high): the lowest reading at the highest tax, the highest at the lowest."""
    low = min(readings) / (1.0 + tax[1])
    high = max(readings) / (1.0 + tax[0])
    return low, high


def predict(tokens_per_step: float, draft_len: int, draft_cost: float, verify: VerifyCost,
            tax: tuple[float, float] = (0.0, 0.0), counted: tuple[str, ...] = ()) -> Prediction:
    """The speed-up of one acceptance length (module docstring): a single reading, ranged by the tax."""
    reading = tokens_per_step / (draft_len * draft_cost + verify.factor)
    low, high = speedup_range((reading,), tax)
    return Prediction(low, high, (reading,), draft_len, draft_cost, verify, tax, counted)


def costs(form_id: str, draft_len: int, batch: int, *, draft_cost: float | None = None,
          draft_cost_source: str = "given", verify_cost: float | None = None, count_verify: bool = True, count_overlap: bool = True,
          table: VerifyTable | None = None) -> tuple[float, str, VerifyCost, tuple[float, float], tuple[str, ...]]:
    """Each cost of one step of ``form_id`` at ``batch`` with its source, as estimate and the calculator
    price it: (draft cost c, its source, verification, overlap tax range, what was counted in words)."""
    f = form(form_id)
    table = table or verify_table()
    # verification first: it applies to every method, so its message comes first (as in calculator.js)
    if verify_cost is not None:
        verify = VerifyCost(verify_cost, "given")
    elif count_verify:
        verify = table.cost(batch, draft_len)
    else:
        verify = VerifyCost(1.0, "not counted: checking k + 1 tokens taken to cost one plain step")
    if draft_cost is not None:
        c, c_source = draft_cost, draft_cost_source
    elif f.draft_cost == "draft_pass":
        c, c_source = table.draft_cost(batch), f"{f.draft_cost_source}, at batch {batch}"
    elif isinstance(f.draft_cost, (int, float)):
        c, c_source = float(f.draft_cost), f.draft_cost_source
    else:
        raise UserError(f"{f.label}: {f.draft_cost_source} (--draft-cost C, in target steps per draft token)")
    counted = [f"draft {c:.3f} per draft token ({c_source})", f"verification {verify.factor:.3f} ({verify.source})"]
    if f.overlap_scheduler:
        tax = (0.0, 0.0)
        counted.append(f"overlap scheduler: kept on for {f.label}, nothing to charge")
    elif count_overlap:
        t = overlap_tax()
        tax = (t.low, t.high)
        counted.append(f"overlap scheduler off for {f.label} ({WITHOUT_OVERLAP[f.why]}): each step "
                       f"{1 + t.low:.2f}-{1 + t.high:.2f}x as long ({t.source})")
    else:
        tax = (0.0, 0.0)
        counted.append(f"overlap scheduler off for {f.label}: not counted")
    return c, c_source, verify, tax, tuple(counted)


def calculator_data() -> dict:
    """Everything calculator.js needs, with the sources it shows (embedded in the page at build time)."""
    t = overlap_tax()
    table = verify_table()
    return {"verify": table.as_data(), "overlap": {"low": t.low, "high": t.high, "source": t.source, "urls": list(t.urls)},
            "forms": [{"id": f.id, "method": f.method, "label": f.label, "overlap_scheduler": f.overlap_scheduler,
                       "why": f.why,
                       "draft_cost": f.draft_cost, "draft_cost_source": f.draft_cost_source} for f in forms()]}
