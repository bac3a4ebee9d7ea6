"""The shared draft -> verify -> accept loop keeps the target's output and counts honestly."""

from __future__ import annotations

import collections

import pytest
import torch

from specdec_guide import speculation as S

VOCAB = 6


def bigram_logits(seed: int = 0):
    """A fake target whose next-token logits depend only on the previous token."""
    table = torch.randn(VOCAB, VOCAB, generator=torch.Generator().manual_seed(seed)) * 2
    return lambda tokens, start=0: table[torch.tensor(list(tokens))][start:]


class FixedDrafter:
    def __init__(self, proposal):
        self.proposal = proposal
        self.seen = []

    def propose(self, request):
        self.seen.append(request)
        return list(self.proposal)[: request.max_draft_len]


class OracleDrafter:
    """Proposes exactly what the greedy target will say: every draft token is accepted."""

    def __init__(self, logits_fn):
        self.logits_fn = logits_fn

    def propose(self, request):
        tokens, out = list(request.tokens), []
        for _ in range(request.max_draft_len):
            out.append(int(self.logits_fn(tokens)[-1].argmax()))
            tokens.append(out[-1])
        return out


def test_greedy_output_is_unchanged_by_any_drafter():
    f = bigram_logits()
    plain = S.generate(f, [0, 1], 30)
    for drafter in (FixedDrafter([2, 2, 2]), FixedDrafter([]), OracleDrafter(f)):
        spec = S.generate(f, [0, 1], 30, drafter=drafter, max_draft_len=3)
        assert spec.tokens == plain.tokens
        assert len(spec.tokens) == 30
        assert spec.stats.accepted_tokens <= spec.stats.drafted_tokens
        assert spec.stats.generated_tokens == 30


def test_plain_decoding_is_one_token_per_target_step():
    stats = S.generate(bigram_logits(), [3], 12).stats
    assert stats.target_steps == 12 and stats.mean_acceptance_length == 1.0 and stats.drafted_tokens == 0


def test_oracle_drafts_are_all_accepted_and_cut_target_steps():
    f = bigram_logits()
    spec = S.generate(f, [0], 20, drafter=OracleDrafter(f), max_draft_len=4)
    assert spec.stats.acceptance_rate == 1.0
    assert spec.stats.target_steps == 4  # 5 tokens per step
    assert spec.stats.acceptance_lengths == [5, 5, 5, 5]


def test_drafts_never_exceed_the_remaining_budget():
    f = bigram_logits()
    drafter = FixedDrafter([1, 1, 1, 1, 1, 1])
    out = S.generate(f, [0], 7, drafter=drafter, max_draft_len=6)
    assert len(out.tokens) == 7
    for req in drafter.seen:
        remaining = 7 - (len(req.tokens) - req.prompt_len)
        assert req.max_draft_len <= remaining - 1


def test_eos_stops_generation_and_is_reported():
    f = bigram_logits()
    plain = S.generate(f, [0], 40)
    eos = plain.tokens[5]
    first = plain.tokens.index(eos)
    out = S.generate(f, [0], 40, eos_id=eos, drafter=OracleDrafter(f), max_draft_len=3)
    assert out.tokens == plain.tokens[: first + 1]
    assert out.finish_reason == "stop"


def test_verify_greedy_accepts_the_matching_prefix_plus_one():
    logits = torch.full((4, VOCAB), -1.0)
    for row, tok in enumerate([2, 3, 5, 1]):
        logits[row, tok] = 1.0
    emitted, accepted = S.verify(logits, [2, 3, 4], S.SamplingConfig())
    assert (emitted, accepted) == ([2, 3, 5], 2)


def test_speculative_sampling_keeps_the_target_distribution():
    """Two-token continuations sampled with and without a (bad) drafter match in distribution."""
    f = bigram_logits(seed=3)
    n = 3000
    plain, spec = collections.Counter(), collections.Counter()
    for i in range(n):
        cfg = S.SamplingConfig(temperature=1.0, seed=i)
        plain[tuple(S.generate(f, [0], 2, sampling=cfg).tokens)] += 1
        cfg = S.SamplingConfig(temperature=1.0, seed=n + i)
        spec[tuple(S.generate(f, [0], 2, sampling=cfg, drafter=FixedDrafter([4, 4]), max_draft_len=2).tokens)] += 1
    # total variation distance between two empirical distributions of 3000 draws each
    tv = 0.5 * sum(abs(plain[k] - spec[k]) / n for k in set(plain) | set(spec))
    assert tv < 0.06, tv


def test_sampling_with_a_seed_is_reproducible():
    f = bigram_logits()
    cfg = S.SamplingConfig(temperature=0.8, top_k=4, top_p=0.9, seed=7)
    a = S.generate(f, [0], 25, sampling=cfg, drafter=FixedDrafter([1, 2]), max_draft_len=2)
    b = S.generate(f, [0], 25, sampling=cfg, drafter=FixedDrafter([1, 2]), max_draft_len=2)
    assert a.tokens == b.tokens


def test_top_k_and_top_p_restrict_the_support():
    logits = torch.tensor([0.0, 1.0, 2.0, 3.0])
    assert (S.SamplingConfig(temperature=1.0, top_k=2).probs(logits)[:2] == 0).all()
    p = S.SamplingConfig(temperature=1.0, top_p=0.5).probs(logits)
    assert p[3] == 1.0 or (p > 0).sum() <= 2
    assert torch.isclose(p.sum(), torch.tensor(1.0))


@pytest.mark.parametrize("a, k, expected", [(0.0, 4, 1.0), (1.0, 4, 5.0), (0.5, 1, 1.5), (0.8, 3, 2.952)])
def test_expected_tokens_per_step(a, k, expected):
    assert S.expected_tokens_per_step(a, k) == pytest.approx(expected)


def test_expected_speedup_counts_the_draft_cost():
    assert S.expected_speedup(1.0, 4, 0.0) == pytest.approx(5.0)
    assert S.expected_speedup(0.8, 3, 0.1) == pytest.approx(2.952 / 1.3)
    assert S.expected_speedup(0.0, 4, 0.25) < 1.0  # a useless drafter slows decoding down


def test_max_new_tokens_must_be_positive():
    with pytest.raises(ValueError):
        S.generate(bigram_logits(), [0], 0)


def test_per_token_acceptance_counts_only_examined_draft_tokens():
    f = bigram_logits()
    plain = S.generate(f, [0], 12).tokens
    # right first token, then wrong: 1 accepted, 1 rejection, 3 drafted per step; the last
    # step may draft only 1 token (budget) and has no rejection
    class HalfRight:
        def propose(self, request):
            done = len(request.tokens) - request.prompt_len
            return [plain[done], (plain[done + 1] + 1) % VOCAB, 0][: request.max_draft_len]

    stats = S.generate(f, [0], 12, drafter=HalfRight(), max_draft_len=3).stats
    assert stats.target_steps == 6 and stats.rejections == 5
    assert stats.accepted_tokens == 6 and stats.drafted_tokens == 5 * 3 + 1
    assert stats.per_token_acceptance == pytest.approx(6 / 11)
    assert stats.acceptance_rate == pytest.approx(6 / 16)


# --- the KV-cached Hugging Face adapter (tiny models: fast) --------------------------------------

@pytest.fixture(scope="module")
def tiny_target(tiny_models):
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(tiny_models[0]).eval()


def _full(model, tokens):
    with torch.no_grad():
        return model(input_ids=torch.tensor([tokens])).logits[0]


def test_cached_logits_equal_a_full_reread_after_growth_and_rollback(tiny_target):
    fn = S.hf_logits_fn(tiny_target)
    prompt = list(b"The cache follows ")
    calls = [
        (prompt, 0),  # the prompt, every row
        (prompt + [97, 98, 99], len(prompt) - 1),  # a draft of 3 on top
        (prompt + [97, 120], len(prompt)),  # rejected at the 2nd draft token: rolls back
        (prompt + [97, 120, 121, 122, 123], len(prompt) + 1),
        (list(b"Another request"), 3),  # unrelated tokens: starts over
    ]
    for tokens, start in calls:
        got = fn(tokens, start)
        want = _full(tiny_target, tokens)[start:]
        assert got.shape == want.shape
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
    assert fn.positions_computed < sum(len(t) for t, _ in calls)  # the cache was really reused


def test_plain_decoding_feeds_each_token_once_and_one_pass_per_step(tiny_target, tiny_models):
    from specdec_guide.drafters.draft_model import DraftModelDrafter

    prompt, n = list(b"def f(x):\n    return x"), 24
    fn = S.hf_logits_fn(tiny_target)
    plain = S.generate(fn, prompt, n)
    assert (fn.forward_calls, fn.positions_computed) == (n, len(prompt) + n - 1)

    fn = S.hf_logits_fn(tiny_target)
    drafter = DraftModelDrafter.from_pretrained(str(tiny_models[1]), max_draft_len=4)
    spec = S.generate(fn, prompt, n, drafter=drafter, max_draft_len=4)
    assert spec.tokens == plain.tokens
    assert fn.forward_calls == spec.stats.target_steps < n  # k + 1 positions verified in one pass
    # Each pass feeds only what the cache lacks: the token the target added last step + the new draft.
    assert fn.positions_computed == len(prompt) + (spec.stats.target_steps - 1) + spec.stats.drafted_tokens


def test_cached_sampling_matches_the_uncached_loop(tiny_target):
    cfg = S.SamplingConfig(temperature=1.0, seed=5)
    prompt = list(b"Sampling ")
    uncached = S.generate(lambda tokens, start=0: _full(tiny_target, list(tokens))[start:], prompt, 16, sampling=cfg)
    cached = S.generate(S.hf_logits_fn(tiny_target), prompt, 16, sampling=cfg)
    assert cached.tokens == uncached.tokens


def test_lazy_rows_equal_the_full_logits_and_run_the_head_only_when_read(tiny_target):
    fn = S.hf_logits_fn(tiny_target)
    tokens, start = list(b"Lazy rows ") + [97, 98, 99, 100], 9
    rows = fn.rows(tokens, start)
    assert isinstance(rows, S.LazyRows) and len(rows) == len(tokens) - start and rows.head_rows == 0
    want = _full(tiny_target, tokens)[start:]
    torch.testing.assert_close(rows[0], want[0], rtol=1e-5, atol=1e-5)
    assert rows.head_rows == 1  # row 0 alone
    torch.testing.assert_close(rows[-1], want[-1], rtol=1e-5, atol=1e-5)
    assert rows.head_rows == len(rows)  # any later row: all the rest in one product
    torch.testing.assert_close(rows[0 : len(rows)], want, rtol=1e-5, atol=1e-5)


def test_verify_reads_no_row_after_the_first_rejection(tiny_target):
    fn = S.hf_logits_fn(tiny_target)
    prompt = list(b"def f(x):\n    return ")
    greedy = S.generate(S.hf_logits_fn(tiny_target), prompt, 5).tokens
    wrong = [(greedy[0] + 1) % tiny_target.config.vocab_size] + greedy[1:4]
    # (draft, tokens verify emits, draft tokens accepted, head rows computed)
    for draft, emitted, accepted, rows_read in ((wrong, greedy[:1], 0, 1), (greedy[:4], greedy[:5], 4, 5)):
        fn.reset()
        rows = fn.rows(prompt + draft, len(prompt) - 1)
        assert S.verify(rows, draft, S.SamplingConfig()) == (emitted, accepted)
        assert rows.head_rows == rows_read


def test_verify_needs_one_row_more_than_the_draft():
    with pytest.raises(ValueError, match="need len\\(draft\\) \\+ 1"):
        S.verify(torch.zeros(2, 5), [1, 2], S.SamplingConfig())


def test_architectures_outside_the_list_keep_the_full_forward_pass():
    from transformers import GPT2Config, GPT2LMHeadModel

    gpt2 = GPT2LMHeadModel(GPT2Config(n_layer=1, n_embd=16, n_head=2, vocab_size=64, n_positions=32)).eval()
    assert S.CachedLogits(gpt2)._head is None  # its logits are not checked to be exactly head(decoder)


def test_after_an_accepted_first_token_the_next_pass_computes_every_row_at_once(tiny_target):
    fn = S.hf_logits_fn(tiny_target)
    prompt = list(b"streaks: ")
    greedy = S.generate(S.hf_logits_fn(tiny_target), prompt, 9).tokens
    first = fn.rows(prompt + greedy[:4], len(prompt) - 1)
    assert S.verify(first, greedy[:4], S.SamplingConfig())[1] == 4 and first.read_past_first
    so_far = prompt + greedy[:5]
    second = fn.rows(so_far + [0, 0, 0, 0], len(so_far) - 1)
    second[0]
    assert second.eager and second.head_rows == len(second)
    fn.reset()
    assert not fn.rows(so_far + [0, 0], len(so_far) - 1).eager  # a new request starts lazy


def reference_penalized_greedy(logits_fn, prompt, n, frequency, presence):
    """Plain greedy decoding with the penalties applied by hand (prompt tokens counted)."""
    tokens = list(prompt)
    for _ in range(n):
        row = logits_fn(tokens)[-1]
        counts = torch.bincount(torch.tensor(tokens), minlength=row.shape[-1]).float()
        tokens.append(int(torch.argmax(row - frequency * counts - presence * (counts > 0).float())))
    return tokens[len(prompt):]


def test_penalties_keep_greedy_speculation_exact_and_change_the_output():
    logits_fn = bigram_logits(3)
    prompt = [0, 1, 0, 1]
    penal = S.SamplingConfig(frequency_penalty=1.5, presence_penalty=0.5)
    plain = S.generate(logits_fn, prompt, 12).tokens
    want = reference_penalized_greedy(logits_fn, prompt, 12, 1.5, 0.5)
    assert S.generate(logits_fn, prompt, 12, sampling=penal).tokens == want
    assert want != plain  # the penalty acts on this table
    # Drafts that repeat what was just accepted: verification must count accepted drafts per position.
    for proposal in ([0, 1, 0, 1], want[:4], [2, 2, 2]):
        got = S.generate(logits_fn, prompt, 12, drafter=FixedDrafter(proposal), max_draft_len=4, sampling=penal)
        assert got.tokens == want, proposal


def test_verify_penalizes_each_position_with_the_counts_as_of_it():
    rows = torch.zeros(3, VOCAB)
    rows[:, 2] = 1.0  # token 2 is every position's favourite, token 4 the runner-up
    rows[:, 4] = 0.6
    counts = torch.zeros(VOCAB)
    penal = S.SamplingConfig(presence_penalty=0.5)
    # Row 0 keeps 2 (unseen); row 1 sees the accepted 2 and prefers 4: the second drafted 2 is rejected.
    assert S.verify(rows, [2, 2], penal, counts=counts) == ([2, 4], 1)
    assert counts.sum() == 0  # the caller's counts are left alone
    assert S.verify(rows, [2, 2], S.SamplingConfig(), counts=counts) == ([2, 2, 2], 2)
