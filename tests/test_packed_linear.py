"""Packed linear layers: the same linear map as ``torch.nn.functional.linear``, on the same parameters."""

from __future__ import annotations

import pytest
import torch

from specdec_guide import attention, packed_linear

pytestmark = pytest.mark.skipif(not packed_linear.available(),
                                reason="this PyTorch build cannot pack weights for oneDNN; the engine runs stock layers")


def _close(got: torch.Tensor, want: torch.Tensor) -> None:
    assert got.shape == want.shape
    assert (got - want).abs().max() <= packed_linear.TOLERANCE * want.abs().max()


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("rows", [1, 2, 5, 16, 32, 33, 300])
def test_a_packed_layer_computes_the_stock_product(rows, bias):
    torch.manual_seed(rows)
    stock = torch.nn.Linear(48, 80, bias=bias)
    packed = packed_linear.PackedLinear(stock)
    x = torch.randn(rows, 48)
    with torch.inference_mode(), packed_linear.verifying():
        _close(packed(x), torch.nn.functional.linear(x, stock.weight, stock.bias))
        batched = torch.randn(1, rows, 48)  # [batch, positions, hidden], as a decoder layer calls it
        _close(packed(batched), torch.nn.functional.linear(batched, stock.weight, stock.bias))
    assert packed.weight is stock.weight and packed.bias is stock.bias


def test_only_a_few_rows_of_a_verification_pass_take_the_packed_path():
    """Outside a verification pass (a prompt, however short) and for one row (a plain step) or many,
    a layer stays stock, so none of them pays for packing."""
    packed = packed_linear.PackedLinear(torch.nn.Linear(16, 8))
    with torch.inference_mode():
        packed(torch.randn(1, 2, 16))
        assert packed.packed is None
        with packed_linear.verifying():
            for rows in (1, 33, 300):
                packed(torch.randn(1, rows, 16))
                assert packed.packed is None, rows
            packed(torch.randn(1, 2, 16))
    assert packed.packed is not None


def test_a_layer_moved_to_another_dtype_stops_reading_the_float32_copy():
    torch.manual_seed(0)
    packed = packed_linear.PackedLinear(torch.nn.Linear(16, 8))
    with torch.inference_mode(), packed_linear.verifying():
        packed(torch.randn(3, 16))
    packed = packed.to(torch.float64)
    x = torch.randn(3, 16, dtype=torch.float64)
    with torch.inference_mode(), packed_linear.verifying():
        assert torch.equal(packed(x), torch.nn.functional.linear(x, packed.weight, packed.bias))


@pytest.fixture(scope="module")
def llama_dir(tmp_path_factory):
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    path = tmp_path_factory.mktemp("packed_llama")
    LlamaForCausalLM(LlamaConfig(vocab_size=256, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                 num_attention_heads=4, num_key_value_heads=2, tie_word_embeddings=True)
                     ).save_pretrained(path)
    return path


def test_the_engine_loads_every_linear_packed_with_the_parameters_it_had(llama_dir):
    from transformers import AutoModelForCausalLM

    stock = AutoModelForCausalLM.from_pretrained(llama_dir, dtype=torch.float32).eval()
    ours = attention.load_causal_lm(str(llama_dir))
    assert ours.config._attn_implementation == attention.NAME
    linears = [name for name, m in stock.named_modules() if isinstance(m, torch.nn.Linear)]
    assert len(linears) == 2 * 7 + 1  # q k v o gate up down per layer, and the head
    assert [name for name, m in ours.named_modules() if isinstance(m, packed_linear.PackedLinear)] == linears
    assert ours.lm_head.weight is ours.model.embed_tokens.weight  # still tied
    assert list(ours.state_dict()) == list(stock.state_dict())
    ids = torch.tensor([list(b"packed weights")])  # 14 positions
    with torch.inference_mode():
        assert torch.equal(ours(input_ids=ids).logits, stock(input_ids=ids).logits)  # outside a pass: stock
        with packed_linear.verifying():
            _close(ours(input_ids=ids).logits, stock(input_ids=ids).logits)
    assert all(m.packed is not None for m in ours.modules() if isinstance(m, packed_linear.PackedLinear))


def test_the_loop_packs_at_its_first_verification_pass_and_keeps_greedy_output(llama_dir):
    """Plain decoding never packs; speculative decoding packs and still emits plain decoding's tokens."""
    from specdec_guide import speculation
    from specdec_guide.drafters.ngram import NGramDrafter

    prompt = list(b"abcabcabcabc abcabc")
    plain_model, spec_model = attention.load_causal_lm(str(llama_dir)), attention.load_causal_lm(str(llama_dir))
    plain = speculation.generate(speculation.hf_logits_fn(plain_model), prompt, 24)
    assert not any(getattr(m, "packed", None) is not None for m in plain_model.modules())
    spec = speculation.generate(speculation.hf_logits_fn(spec_model), prompt, 24,
                                drafter=NGramDrafter(4, 2, is_public_pool=False), max_draft_len=4)
    assert spec.stats.drafted_tokens > 0
    assert all(m.packed is not None for m in spec_model.modules() if isinstance(m, packed_linear.PackedLinear))
    assert spec.tokens == plain.tokens


def _verified(layer, x):
    with torch.inference_mode(), packed_linear.verifying():
        return layer(x)


def test_a_changed_weight_is_packed_again():
    """A weight loaded, edited in place or moved to another dtype and back after packing is packed
    again: the product follows the weight the layer has now, never a stale copy."""
    torch.manual_seed(0)
    layer, x = packed_linear.PackedLinear(torch.nn.Linear(16, 8)), torch.randn(3, 16)
    _verified(layer, x)
    changes = [lambda m: m.load_state_dict({"weight": torch.randn(8, 16), "bias": torch.randn(8)}),
               lambda m: m.weight.mul_(3),
               lambda m: m.to(torch.bfloat16).to(torch.float32)]
    for change in changes:
        with torch.no_grad():
            change(layer)
        _close(_verified(layer, x), torch.nn.functional.linear(x, layer.weight, layer.bias))


def test_converting_the_parameters_drops_the_packed_copy():
    """After .to() the weight can sit at its old address with its old version counter (the head's
    49152 x 576 weight did after a bfloat16 round trip), so a conversion drops the copy outright."""
    torch.manual_seed(0)
    layer, x = packed_linear.PackedLinear(torch.nn.Linear(576, 2048)), torch.randn(3, 576)
    _verified(layer, x)
    layer.to(torch.bfloat16).to(torch.float32)
    assert layer.packed is None
    _close(_verified(layer, x), torch.nn.functional.linear(x, layer.weight, layer.bias))


def test_a_weight_made_in_inference_mode_is_packed_too():
    """Such a weight keeps no version counter; the layer still packs it and computes the product."""
    torch.manual_seed(0)
    with torch.inference_mode():
        layer, x = packed_linear.PackedLinear(torch.nn.Linear(16, 8)), torch.randn(3, 16)
        with packed_linear.verifying():
            _close(layer(x), torch.nn.functional.linear(x, layer.weight, layer.bias))
    assert layer.packed is not None


# Switching oneDNN off also sets its TF32 flag, which this CPU-only torch answers with a warning.
@pytest.mark.filterwarnings("ignore:TF32 acceleration on top of oneDNN:UserWarning")
def test_gradients_and_oneDNN_switched_off_take_the_stock_path():
    torch.manual_seed(0)
    layer = packed_linear.PackedLinear(torch.nn.Linear(16, 8))
    with packed_linear.verifying():
        layer(torch.randn(3, 16)).sum().backward()  # grad mode, a weight that wants a gradient
    assert layer.weight.grad is not None and layer.packed is None
    with torch.backends.mkldnn.flags(enabled=False):
        _verified(layer, torch.randn(3, 16))
    assert layer.packed is None


def test_a_copied_layer_packs_again():
    import copy
    import pickle

    torch.manual_seed(0)
    layer, x = packed_linear.PackedLinear(torch.nn.Linear(16, 8)), torch.randn(3, 16)
    want = _verified(layer, x)
    for twin in (copy.deepcopy(layer), pickle.loads(pickle.dumps(layer))):
        assert twin.packed is None
        _close(_verified(twin, x), want)


def test_a_build_that_cannot_pack_keeps_the_stock_layers(llama_dir, monkeypatch):
    def refuse(weight):
        raise RuntimeError("no oneDNN here")

    monkeypatch.setattr(packed_linear, "_pack", refuse)
    assert not packed_linear.available()
    model = attention.load_causal_lm(str(llama_dir))
    assert not any(isinstance(m, packed_linear.PackedLinear) for m in model.modules())
    assert packed_linear.pack_linears(model) == 0


def test_a_build_whose_packed_product_differs_is_not_used(monkeypatch):
    monkeypatch.setattr(packed_linear, "_packed_product", lambda x, packed, bias: torch.zeros(x.shape[0], packed.shape[0]))
    assert not packed_linear.available()


@pytest.mark.parametrize("failure", [NotImplementedError, AttributeError, TypeError])
def test_any_failure_of_the_private_operators_means_stock_layers(monkeypatch, failure):
    def fail(weight):
        raise failure("not in this build")

    monkeypatch.setattr(packed_linear, "_pack", fail)
    assert not packed_linear.available()


def test_a_build_without_oneDNN_is_not_asked(monkeypatch):
    monkeypatch.setattr(torch.backends.mkldnn, "is_available", lambda: False)
    assert not packed_linear.available()


def test_a_packed_layer_reads_its_packed_copy():
    """What makes it cheaper: the forward multiplies by the packed copy, not by ``weight`` again."""
    packed = packed_linear.PackedLinear(torch.nn.Linear(16, 8, bias=False))
    packed.packed = packed_linear._pack(torch.zeros(8, 16))  # made already from this weight: not made again
    packed._packed_from = packed._weight_state()
    with torch.inference_mode(), packed_linear.verifying():
        assert torch.equal(packed(torch.randn(2, 16)), torch.zeros(2, 8))
