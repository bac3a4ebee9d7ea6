"""Grouped-query attention for verification passes, registered with transformers as ``sdpa_gqa``.

SmolLM2 (like Llama 3) has fewer key/value heads than query heads (3 and 9). transformers' stock
``sdpa`` attention lets PyTorch's kernel share the key/value heads only when no mask is given: a
plain decoding step (one new position) or a prompt. A verification pass feeds several new
positions on top of a cache, which needs a mask, so stock ``sdpa`` copies every cached key and
value three times (``repeat_kv``) in each layer first: on this CPU, about a tenth of the pass.
``sdpa_gqa`` makes the same call with ``enable_gqa=True`` instead; the numbers are the same
(checked bit for bit in tests/test_attention.py), only the copy is gone.
"""

from __future__ import annotations

import torch

NAME = "sdpa_gqa"


def sdpa_gqa_attention(module, query, key, value, attention_mask, dropout: float = 0.0, scaling=None,
                       is_causal=None, **kwargs):
    """transformers' attention-function interface: query [b, heads, q, d], key/value [b, kv_heads, k, d]."""
    q_len, kv_len = query.shape[2], key.shape[2]
    if attention_mask is None and q_len > 1 and kv_len > q_len:
        # is_causal would align the mask top-left; the new positions are the last ones
        attention_mask = torch.ones(q_len, kv_len, dtype=torch.bool, device=query.device).tril(kv_len - q_len)
    causal = q_len > 1 and attention_mask is None and (is_causal if is_causal is not None else
                                                       getattr(module, "is_causal", True))
    out = torch.nn.functional.scaled_dot_product_attention(
        query, key, value, attn_mask=attention_mask, dropout_p=dropout if module.training else 0.0,
        scale=scaling, is_causal=causal, enable_gqa=key.shape[1] != query.shape[1])
    return out.transpose(1, 2).contiguous(), None


def register() -> str:
    """Make ``attn_implementation="sdpa_gqa"`` known to transformers (masks as for ``sdpa``); idempotent."""
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface, sdpa_mask

    AttentionInterface.register(NAME, sdpa_gqa_attention)
    AttentionMaskInterface.register(NAME, sdpa_mask)
    return NAME


def load_causal_lm(path: str):
    """A local checkpoint as the CPU engine runs it: float32, eval mode, ``sdpa_gqa`` attention,
    linear layers packed for oneDNN where this PyTorch build can (:mod:`specdec_guide.packed_linear`)."""
    from transformers import AutoModelForCausalLM

    from specdec_guide.packed_linear import pack_linears

    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32, local_files_only=True,
                                                 attn_implementation=register()).eval()
    pack_linears(model)
    return model
