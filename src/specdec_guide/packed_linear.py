"""Linear layers whose weights are packed once for oneDNN, so that a pass over a few rows costs about one row.

A verification pass multiplies each weight matrix by a handful of rows (the last token and the
draft). PyTorch's stock CPU ``linear`` hands that to MKL's general matrix product, which computes
such a small product far below the core's speed. oneDNN can arrange a weight once for its kernels
(``torch.ops.mkldnn._reorder_linear_weight``: a private PyTorch operator, hence the check in
:func:`available`) and then multiplies a few rows by it in about the time reading it takes. On
the guide's 2-core test machine a pass over five new positions of SmolLM2-135M cost 1.98 plain
decoding steps with stock layers and 1.04 packed in the benchmark's stored runs
(``benchmarks/results/real_model.md``, 2026-12-01 and 2026-12-02, on different hosts and loads);
measured side by side on one host, about 1.4 to 1.6 stock and 0.97 to 1.2 packed
(``audit/cpu_engine.yaml``). That is how a GPU at batch 1 behaves, and the reason a verified
draft is nearly free there.

Only verification passes take the packed path: products of a few rows (:data:`PACKED_ROWS`)
made inside :func:`verifying`, which the loop's KV-cached scorer
(:class:`specdec_guide.speculation.CachedLogits`) enters for a pass over several new positions on
top of its cache. A plain decoding step (one row: MKL's matrix-vector product is as fast) and a
prompt, however short, stay stock. A layer is packed at its first verification pass, so a model
that never verifies a draft never pays for packing (about half a second for SmolLM2-135M) nor for
the copy's memory (the packed copy is made next to the weight, which stays for everything else
that reads it: the tied embedding, ``state_dict``, the tests).

The numbers are the same linear map (the tests compare with ``torch.nn.functional.linear``); the
last bits differ, as between any two kernels.
"""

from __future__ import annotations

import contextlib
import contextvars
from typing import Iterator

import torch

#: How far a packed product may be from the stock one, relative to the largest output.
TOLERANCE = 1e-4
#: Row counts that use the packed weight inside :func:`verifying` (a pass checks its draft plus one).
PACKED_ROWS = range(2, 33)
_VERIFYING = contextvars.ContextVar("specdec_guide_verifying", default=False)


@contextlib.contextmanager
def verifying() -> Iterator[None]:
    """Within this block, products over :data:`PACKED_ROWS` rows read the packed weights."""
    token = _VERIFYING.set(True)
    try:
        yield
    finally:
        _VERIFYING.reset(token)


def _pack(weight: torch.Tensor) -> torch.Tensor:
    return torch.ops.mkldnn._reorder_linear_weight(weight.detach(), None)


def _packed_product(x: torch.Tensor, packed: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
    rows = x.reshape(-1, x.shape[-1])
    out = torch.ops.mkldnn._linear_pointwise(rows, packed, bias, "none", [], "")
    return out.reshape(*x.shape[:-1], out.shape[-1])


class PackedLinear(torch.nn.Linear):
    """An ``nn.Linear`` (same ``weight`` and ``bias`` parameters) that multiplies a few rows by a packed copy.

    The packed copy is made at the first product over :data:`PACKED_ROWS` rows inside
    :func:`verifying`, and made again when ``weight`` has changed since (loaded or edited in place;
    not an edit through ``weight.data``, which PyTorch does not count as a change) and after any
    conversion of the module's parameters (``.to()``, ``.float()``). Everywhere else, and whenever
    a gradient is wanted or oneDNN is switched off (``torch.backends.mkldnn.flags(enabled=False)``),
    it is a stock ``nn.Linear``. A copy of the module (``deepcopy``, ``pickle``) leaves the packed
    copy behind and packs again.
    """

    def __init__(self, linear: torch.nn.Linear):
        super().__init__(linear.in_features, linear.out_features, bias=linear.bias is not None, device="meta")
        self.weight, self.bias = linear.weight, linear.bias
        self.packed: torch.Tensor | None = None
        self._packed_from: tuple | None = None  # what ``weight`` was when packed

    def _weight_state(self) -> tuple:
        w = self.weight
        try:
            version = w._version
        except RuntimeError:  # an inference tensor keeps no version counter: in-place edits go unseen
            version = None
        return id(w), w.data_ptr(), version

    def _apply(self, fn, recurse=True):
        # .to(), .float() and the like: the parameters' memory can be reused at the same address.
        self.packed, self._packed_from = None, None
        return super()._apply(fn, recurse)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        w = self.weight
        if (not _VERIFYING.get() or x.numel() // self.in_features not in PACKED_ROWS
                or x.dtype is not torch.float32 or w.dtype is not torch.float32 or x.device.type != "cpu"
                or (torch.is_grad_enabled() and (w.requires_grad or x.requires_grad))
                or not torch._C._get_mkldnn_enabled()):
            return torch.nn.functional.linear(x, w, self.bias)
        state = self._weight_state()
        if self.packed is None or self._packed_from != state:
            self.packed, self._packed_from = _pack(w), state
        return _packed_product(x, self.packed, self.bias)

    def __getstate__(self):
        state = super().__getstate__().copy()
        state["packed"], state["_packed_from"] = None, None  # an opaque oneDNN tensor does not copy
        return state


def available() -> bool:
    """True when this PyTorch build packs and multiplies float32 weights as it should.

    Checked by doing it once on a small product: a build without oneDNN, or a CPU it does not
    support, raises or differs there and keeps stock layers. One product cannot prove every shape
    a model uses; the tests and the benchmarks compare whole models' output with stock layers.
    """
    if not torch.backends.mkldnn.is_available():
        return False
    try:
        gen = torch.Generator().manual_seed(0)
        weight = torch.randn(24, 40, generator=gen)
        x = torch.randn(3, 40, generator=gen)
        with torch.inference_mode():
            got = _packed_product(x, _pack(weight), None)
        want = torch.nn.functional.linear(x, weight)
    except Exception:  # noqa: BLE001 - any failure of a private operator means: do not use it
        return False
    return got.shape == want.shape and bool((got - want).abs().max() <= TOLERANCE * want.abs().max())


def pack_linears(model: torch.nn.Module) -> int:
    """Replace every float32 CPU ``nn.Linear`` inside ``model`` with a :class:`PackedLinear`.

    Returns how many were replaced: 0 when :func:`available` says this build cannot.
    """
    if not available():
        return 0
    found = [(parent, name, child) for parent in model.modules() for name, child in parent.named_children()
             if type(child) is torch.nn.Linear and child.weight.dtype == torch.float32
             and child.weight.device.type == "cpu"]
    for parent, name, child in found:
        setattr(parent, name, PackedLinear(child))
    return len(found)
