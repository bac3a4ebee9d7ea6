"""``sdpa_gqa``: the CPU engine's attention gives the stock ``sdpa`` numbers, without the copies."""

from __future__ import annotations

import pytest
import torch

from specdec_guide import attention


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    """A small grouped-query Llama (4 query heads, 2 key/value heads, as SmolLM2 has 9 and 3), twice:
    with stock sdpa, and as the engine loads it (its packed linear layers act only inside a
    verification pass, packed_linear.verifying(), which these passes are not)."""
    from transformers import AutoModelForCausalLM, LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    path = tmp_path_factory.mktemp("gqa_llama")
    LlamaForCausalLM(LlamaConfig(vocab_size=256, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                 num_attention_heads=4, num_key_value_heads=2)).save_pretrained(path)
    stock = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32, attn_implementation="sdpa").eval()
    ours = attention.load_causal_lm(str(path))
    assert ours.config._attn_implementation == attention.NAME
    return stock, ours


@pytest.mark.parametrize("new", [1, 5])
def test_a_pass_on_top_of_a_cache_gives_the_stock_numbers(pair, new):
    from transformers import DynamicCache

    prompt, draft = torch.tensor([list(b"grouped query attention")]), torch.tensor([list(b"heads")[:new]])
    outs = []
    with torch.no_grad():
        for model in pair:
            cache = DynamicCache(config=model.config)
            first = model(input_ids=prompt, cache=cache, use_cache=True).logits
            outs.append((first, model(input_ids=draft, cache=cache, use_cache=True).logits))
    for stock, ours in zip(*outs):
        assert torch.equal(stock, ours)


def test_a_mask_less_multi_position_pass_is_causal_to_the_right():
    """The one path transformers may call without a mask: new positions after cached ones."""
    q, k, v = torch.randn(1, 4, 3, 8), torch.randn(1, 2, 7, 8), torch.randn(1, 2, 7, 8)
    module = torch.nn.Module().eval()
    out, _ = attention.sdpa_gqa_attention(module, q, k, v, None)
    mask = torch.ones(3, 7, dtype=torch.bool).tril(4)  # query i sees keys 0 .. 4 + i
    want = torch.nn.functional.scaled_dot_product_attention(
        q, k.repeat_interleave(2, dim=1), v.repeat_interleave(2, dim=1), attn_mask=mask)
    torch.testing.assert_close(out, want.transpose(1, 2))
