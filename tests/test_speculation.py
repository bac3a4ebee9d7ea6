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


# --- the cache and the rows, on models that cost nothing to build --------------------------------

@pytest.fixture(scope="module")
def gpt2():
    """A random one-layer GPT-2: an architecture outside LAZY_HEAD_MODEL_TYPES (full forward passes)."""
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(0)
    return GPT2LMHeadModel(GPT2Config(n_layer=1, n_embd=16, n_head=2, vocab_size=64, n_positions=64)).eval()


def test_the_full_forward_path_follows_the_tokens_and_computes_only_what_is_new(gpt2):
    fn = S.hf_logits_fn(gpt2)
    assert fn._head is None
    p = list(range(1, 12))
    # (tokens, start, positions the call computes: those after what the cache keeps)
    calls = [
        (p, 0, 11),
        (p + [5, 6, 7], 10, 4),  # a draft of 3 on top: the cache keeps the first 10
        (p + [5, 9], 11, 2),  # rejected at the 2nd draft token: rolled back to 11
        (p[:9] + [1, 2, 3, 4], 10, 4),  # shares 9 tokens, fewer than start: only those are kept
        ([3, 4, 5], 1, 3),  # unrelated tokens: starts over
        ([3, 9, 9], 1, 2),  # shares exactly one token
    ]
    for n, (tokens, start, computed) in enumerate(calls, 1):
        before = fn.positions_computed
        got = fn(tokens, start)
        want = _full(gpt2, tokens)[start:]
        assert got.shape == want.shape
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
        assert (fn.positions_computed - before, fn.forward_calls) == (computed, n), (tokens, start)
    assert fn(p).shape == (11, 64)  # start defaults to 0: every row
    assert fn.rows(p).shape == (11, 64)


def test_start_must_index_one_of_the_tokens(gpt2):
    fn = S.hf_logits_fn(gpt2)
    with pytest.raises(ValueError, match=r"^start=3 must index one of the 3 tokens$"):
        fn.rows([1, 2, 3], 3)
    with pytest.raises(ValueError, match=r"^start=-1 must index one of the 3 tokens$"):
        fn([1, 2, 3], -1)
    assert fn.rows([1, 2, 3], 2).shape == (1, 64)


def test_a_failed_pass_leaves_no_cache_to_trust(gpt2):
    fn = S.hf_logits_fn(gpt2)
    fn([1, 2, 3], 0)
    with pytest.raises(IndexError):
        fn([1, 2, 3, 99], 3)  # 99 is outside the vocabulary: the pass fails half-way
    got = fn([1, 2, 3, 4], 3)
    torch.testing.assert_close(got, _full(gpt2, [1, 2, 3, 4])[3:], rtol=1e-5, atol=1e-5)
    assert fn.positions_computed == 3 + 4  # everything again, nothing taken from the failed pass


class CountingHead:
    def __init__(self):
        self.weight = torch.arange(12.0).reshape(4, 3)  # vocab 4 x hidden 3
        self.calls = []

    def __call__(self, hidden):
        self.calls.append(hidden.shape[0])
        return hidden @ self.weight.T


def lazy(n: int = 4, eager: bool = False):
    head = CountingHead()
    hidden = torch.arange(n * 3, dtype=torch.float32).reshape(n, 3)
    return S.LazyRows(hidden, head, eager=eager), head, hidden @ head.weight.T


def test_lazy_rows_compute_row_zero_alone_then_the_rest_at_once():
    rows, head, want = lazy()
    assert len(rows) == 4 and rows.head_rows == 0 and not rows.read_past_first and not rows.eager
    torch.testing.assert_close(rows[0], want[0])
    torch.testing.assert_close(rows[0], want[0])  # read again: nothing computed again
    assert (head.calls, rows.head_rows, rows.read_past_first) == ([1], 1, False)
    torch.testing.assert_close(rows[2], want[2])
    assert (head.calls, rows.head_rows, rows.read_past_first) == ([1, 3], 4, True)
    torch.testing.assert_close(rows[0], want[0])
    assert rows.read_past_first  # reading row 0 afterwards does not take it back
    torch.testing.assert_close(rows[-1], want[3])
    torch.testing.assert_close(rows[-4], want[0])
    for bad in (4, -5):
        with pytest.raises(IndexError, match=rf"^row {bad} of 4$"):
            rows[bad]


def test_lazy_rows_slices_and_eager_rows():
    rows, head, want = lazy()
    torch.testing.assert_close(rows[0:1], want[0:1])
    assert (head.calls, rows.read_past_first) == ([1], False)  # a slice of row 0 alone is row 0
    torch.testing.assert_close(rows[0:2], want[0:2])
    assert (head.calls, rows.read_past_first) == ([1, 3], True)
    torch.testing.assert_close(rows[0:1], want[0:1])
    assert rows.read_past_first
    torch.testing.assert_close(rows[1:4:2], want[1:4:2])
    rows, head, want = lazy(eager=True)
    torch.testing.assert_close(rows[0], want[0])
    assert (head.calls, rows.head_rows, rows.read_past_first) == ([4], 4, False)
    rows, head, _ = lazy(n=1)
    rows[0:1]
    assert head.calls == [1] and not rows.read_past_first


def test_the_eager_choice_follows_the_last_draft_or_the_caller(tiny_target):
    fn = S.hf_logits_fn(tiny_target)
    prompt = list(b"choices: ")
    greedy = S.generate(S.hf_logits_fn(tiny_target), prompt, 8).tokens
    # a draft of one token, accepted: the next pass is eager
    first = fn.rows(prompt + greedy[:1], len(prompt) - 1)
    assert S.verify(first, greedy[:1], S.SamplingConfig()) == (greedy[:2], 1)
    tokens = prompt + greedy[:2]
    plain = fn.rows(tokens, len(tokens) - 1)  # a pass without a draft (one row) leaves the choice alone
    plain[0]
    assert plain.eager
    tokens = tokens + [int(plain[0].argmax())]
    assert fn.rows(tokens + [0, 0], len(tokens) - 1).eager
    # the caller's choice wins over the streak, either way
    assert not fn.rows(tokens + [0, 0], len(tokens) - 1, eager=False).eager
    fn.reset()
    assert fn.rows(tokens + [0, 0], len(tokens) - 1, eager=True).eager


def test_which_models_get_the_lazy_head():
    from types import SimpleNamespace

    assert S.CachedLogits(SimpleNamespace(config=SimpleNamespace()))._head is None  # no model_type at all
    linear = torch.nn.Linear(3, 4, bias=False)
    llama = SimpleNamespace(config=SimpleNamespace(model_type="llama"), get_output_embeddings=lambda: linear)
    assert S.CachedLogits(llama)._head is linear
    odd = SimpleNamespace(config=SimpleNamespace(model_type="llama"), get_output_embeddings=lambda: torch.nn.Identity())
    assert S.CachedLogits(odd)._head is None  # a head that is not a plain matrix runs whole


def test_each_drafted_token_counts_once_for_the_positions_after_it():
    rows = torch.zeros(4, VOCAB)
    rows[:, 2] = 1.0  # token 2 is every position's favourite, token 4 the runner-up by 0.4
    rows[:, 4] = 0.6
    freq = S.SamplingConfig(frequency_penalty=0.3)
    # 2 loses 0.3 per occurrence: 1.0, 0.7, then 0.4 < 0.6 at the third position
    assert S.verify(rows, [2, 2, 2], freq, counts=torch.zeros(VOCAB)) == ([2, 2, 4], 2)


def test_sampled_acceptance_goes_on_after_an_accepted_token():
    rows = torch.full((3, VOCAB), -100.0)
    for i, token in enumerate([1, 2, 3]):
        rows[i, token] = 100.0  # each position is certain of its token
    cfg = S.SamplingConfig(temperature=1.0)
    assert S.verify(rows, [1, 2], cfg, torch.Generator().manual_seed(0)) == ([1, 2, 3], 2)
    assert S.verify(rows, [1, 5], cfg, torch.Generator().manual_seed(0)) == ([1, 2], 1)


def test_greedy_takes_the_larger_of_two_logits_however_close():
    row = torch.tensor([[10.0, float(torch.nextafter(torch.tensor(10.0), torch.tensor(11.0)))]])
    assert S.verify(row, [], S.SamplingConfig()) == ([1], 0)


def test_the_loop_drafts_only_when_asked_and_names_the_request():
    f = bigram_logits()
    drafter = FixedDrafter([1, 2])
    out = S.generate(f, [0], 5, drafter=drafter)  # no max_draft_len: plain decoding
    assert drafter.seen == [] and out.stats.drafted_tokens == 0 and out.stats.target_steps == 5
    S.generate(f, [0], 5, drafter=drafter, max_draft_len=2)
    assert {r.request_id for r in drafter.seen} == {0}
    S.generate(f, [0], 5, drafter=drafter, max_draft_len=2, request_id=7)
    assert drafter.seen[-1].request_id == 7


def test_one_new_token_is_the_smallest_request():
    f = bigram_logits()
    assert len(S.generate(f, [0], 1).tokens) == 1
    with pytest.raises(ValueError, match=r"^max_new_tokens must be >= 1$"):
        S.generate(f, [0], 0)


def cycle_logits(tokens, start=0):
    """A fake target that always predicts the previous token + 1 (mod VOCAB)."""
    rows = torch.full((len(tokens), VOCAB), -5.0)
    for i, t in enumerate(tokens):
        rows[i, (t + 1) % VOCAB] = 5.0
    return rows[start:]


def test_eos_ends_the_request_only_when_emitted():
    out = S.generate(cycle_logits, [0], 10, eos_id=4)
    assert (out.tokens, out.finish_reason, out.stats.target_steps) == ([1, 2, 3, 4], "stop", 4)
    spec = S.generate(cycle_logits, [0], 10, eos_id=4, drafter=OracleDrafter(cycle_logits), max_draft_len=2)
    assert (spec.tokens, spec.finish_reason, spec.stats.target_steps) == ([1, 2, 3, 4], "stop", 2)
    assert S.generate(cycle_logits, [0], 3, eos_id=5).finish_reason == "length"


def test_an_unseeded_sampler_starts_from_seed_zero():
    f = bigram_logits()
    unseeded = S.generate(f, [0], 12, sampling=S.SamplingConfig(temperature=1.0))
    assert unseeded.tokens == S.generate(f, [0], 12, sampling=S.SamplingConfig(temperature=1.0, seed=0)).tokens
    assert unseeded.tokens != S.generate(f, [0], 12, sampling=S.SamplingConfig(temperature=1.0, seed=1)).tokens


def test_one_draft_token_is_a_draft_and_none_is_asked_for_the_last_token():
    class Recording(OracleDrafter):
        seen: list = []

        def propose(self, request):
            self.seen.append(request.max_draft_len)
            return super().propose(request)

    drafter = Recording(cycle_logits)
    steps = list(S.speculative_steps(cycle_logits, [0], 3, drafter=drafter, max_draft_len=1))
    # budget 3: one draft token, accepted, and the target's own; then one token is left: no draft asked
    assert [(s.tokens, s.drafted, s.accepted) for s in steps] == [([1, 2], 1, 1), ([3], 0, 0)]
    assert drafter.seen == [1]


def test_the_loop_scores_through_rows_where_the_logits_fn_offers_them():
    class RowsOnly:
        def rows(self, tokens, start=0):
            return cycle_logits(tokens, start)

        def __call__(self, tokens, start=0):
            raise AssertionError("the loop should ask for rows")

    assert S.generate(RowsOnly(), [0], 4, drafter=FixedDrafter([2, 3]), max_draft_len=2).tokens == [1, 2, 3, 4]


def test_penalties_can_leave_the_prompt_out():
    logits_fn = bigram_logits(0)
    prompt = [0, 1, 0, 1]
    tokens = list(prompt)
    for _ in range(10):  # by hand: only the generated tokens are penalized
        row = logits_fn(tokens)[-1]
        seen = torch.zeros(VOCAB)
        for t in tokens[len(prompt):]:
            seen[t] = 1.0
        tokens.append(int(torch.argmax(row - 1.5 * seen)))
    want = tokens[len(prompt):]
    cfg = S.SamplingConfig(presence_penalty=1.5, penalize_prompt=False)
    assert S.generate(logits_fn, prompt, 10, sampling=cfg).tokens == want
    counted = S.generate(logits_fn, prompt, 10, sampling=S.SamplingConfig(presence_penalty=1.5)).tokens
    assert counted != want  # counting the prompt changes this output


def test_a_sliding_window_model_rolls_its_cache_back_past_the_window():
    from transformers import MistralConfig, MistralForCausalLM

    torch.manual_seed(0)
    model = MistralForCausalLM(MistralConfig(num_hidden_layers=1, hidden_size=16, intermediate_size=32,
                                             num_attention_heads=2, num_key_value_heads=1, vocab_size=64,
                                             sliding_window=4, max_position_embeddings=64)).eval()
    fn = S.hf_logits_fn(model)
    p = list(range(1, 12))  # longer than the window of 4
    for tokens, start in ((p, 0), (p + [5, 6, 7], 10), (p + [5, 9], 11), (p + [5, 9, 10, 11], 12)):
        torch.testing.assert_close(fn(tokens, start), _full(model, tokens)[start:], rtol=1e-5, atol=1e-5)


def test_lazy_rows_are_lazy_unless_told():
    head = CountingHead()
    rows = S.LazyRows(torch.ones(3, 3), head)
    rows[0]
    assert head.calls == [1] and rows.eager is False


def test_greedy_reads_the_logits_themselves_not_a_rescaled_copy():
    # Two adjacent float32 logits that greedy's sampling distribution (divided by a 1e-6 temperature)
    # rounds to the same value: only the logits themselves still say which token is the target's.
    a = torch.tensor(1.500001311302185)
    row = torch.stack([a, torch.nextafter(a, torch.tensor(2.0))])
    p = S.SamplingConfig().probs(row)
    assert p[0] == p[1]  # the case this test is about
    rows = torch.stack([row, row])
    assert S.verify(rows[:1], [], S.SamplingConfig()) == ([1], 0)
    assert S.verify(rows, [1], S.SamplingConfig()) == ([1, 1], 1)  # the draft's row and the last one alike


def test_a_draft_token_is_accepted_only_when_the_draw_is_below_its_probability():
    # torch.rand draws multiples of 2**-24 in [0, 1): "draw < p" accepts with probability exactly p,
    # "draw <= p" one grid step more. Here the seed's first draw lands exactly on p[token].
    cfg = S.SamplingConfig(temperature=1.0)
    rows = torch.tensor([[-0.014973939396440983, 0.0], [0.0, 0.0]])
    draw = float(torch.rand((), generator=torch.Generator().manual_seed(0)))
    assert float(cfg.probs(rows[0])[0]) == draw
    assert S.verify(rows, [0], cfg, torch.Generator().manual_seed(0)) == ([1], 0)


def test_after_a_rejection_the_token_is_drawn_from_the_normalised_residual():
    # The residual max(p - q, 0) scaled to sum 1, drawn with the same generator: at this seed the two
    # remaining tokens are so close for torch's sampler that weights scaled any other way (the same
    # distribution, rounded differently) pick the other one.
    cfg = S.SamplingConfig(temperature=1.0)
    rows = torch.tensor([[0.0, 0.5767958760261536, -4.0], [0.0, 0.0, 0.0]])
    p = cfg.probs(rows[0])
    gen = torch.Generator().manual_seed(4)
    assert float(torch.rand((), generator=gen)) >= float(p[2])  # token 2 is rejected
    residual = p.clone()
    residual[2] = 0.0
    want = int(torch.multinomial(residual / residual.sum(), 1, generator=gen))
    assert S.verify(rows, [2], cfg, torch.Generator().manual_seed(4)) == ([want], 0)


def test_a_new_adapter_holds_no_cache_until_its_first_pass():
    from types import SimpleNamespace

    fn = S.CachedLogits(SimpleNamespace(config=SimpleNamespace()))
    assert fn.cache is None and fn.tokens == [] and fn.forward_calls == 0


def test_a_new_adapters_first_rows_are_lazy(tiny_target):
    rows = S.hf_logits_fn(tiny_target).rows(list(b"first: "), 0)
    assert rows.eager is False and len(rows) == len(b"first: ")


def test_a_pass_that_keeps_nothing_starts_a_new_cache_and_leaves_the_old_one_alone(gpt2):
    """A new, unrelated sequence gets a cache of its own: the old cache object is not emptied and
    reused (a caller may still hold it)."""
    fn = S.hf_logits_fn(gpt2)
    fn([1, 2, 3])
    old = fn.cache
    fn([4, 5])
    assert fn.cache is not old and old.get_seq_length() == 3 and fn.cache.get_seq_length() == 2


def test_rows_of_the_wrong_count_are_refused_before_any_row_is_read():
    """The loop's first check of a pass is verify's: the number of rows. A LogitsFn that returns no
    row gets that message, not an IndexError from a row read earlier (the penalties' counts)."""
    with pytest.raises(ValueError, match="0 logits rows for a draft of 0"):
        S.generate(lambda tokens, start=0: torch.zeros(0, 5), [1, 2], 3)
