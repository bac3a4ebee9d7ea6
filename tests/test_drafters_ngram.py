"""The NGram drafter's four options, each shown on a hand-made token sequence."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from specdec_guide.drafters.ngram import NGramDrafter
from specdec_guide.speculation import DraftRequest


def ask(drafter: NGramDrafter, tokens: list[int], request_id: int = 1, limit: int = 8) -> list[int]:
    return drafter.propose(DraftRequest(request_id, tokens, prompt_len=1, max_draft_len=limit))


def test_max_matching_ngram_size_longer_tail_disambiguates():
    # The tail [1, 2, 3]: "3" alone first occurred after 7 (-> 8 8 1 2),
    # but "2 3" and "1 2 3" occurred only before 4.
    tokens = [7, 3, 8, 8, 1, 2, 3, 4, 1, 2, 3]
    assert ask(NGramDrafter(4, max_matching_ngram_size=1), tokens) == [8, 8, 1, 2]
    assert ask(NGramDrafter(4, max_matching_ngram_size=2), tokens) == [4, 1, 2, 3]
    assert ask(NGramDrafter(4, max_matching_ngram_size=3), tokens) == [4, 1, 2, 3]


def test_is_use_oldest_picks_first_or_latest_match():
    tokens = [5, 1, 2, 5, 3, 4, 5]  # "5" was followed by "1 2", later by "3 4"
    assert ask(NGramDrafter(2, 1, is_use_oldest=True), tokens) == [1, 2]
    assert ask(NGramDrafter(2, 1, is_use_oldest=False), tokens) == [3, 4]


def test_is_keep_all_false_keeps_one_match_per_pattern():
    tokens = [5, 1, 2, 5, 3, 4, 5]
    keep_all = NGramDrafter(2, 1, is_keep_all=True, is_use_oldest=False)
    keep_one = NGramDrafter(2, 1, is_keep_all=False, is_use_oldest=False)
    assert ask(keep_all, tokens) == [3, 4]
    assert ask(keep_one, tokens) == [1, 2]  # the newer match was never stored
    assert keep_all.public_pool.matches[(5,)] == [(1, 2), (3, 4)]
    assert keep_one.public_pool.matches[(5,)] == [(1, 2)]


def test_is_public_pool_shares_what_other_requests_saw():
    first, second = [10, 11, 12, 13, 14], [20, 10, 11]
    public = NGramDrafter(2, 2, is_public_pool=True)
    private = NGramDrafter(2, 2, is_public_pool=False)
    for drafter in (public, private):
        ask(drafter, first, request_id=1)
    assert ask(public, second, request_id=2) == [12, 13]
    assert ask(private, second, request_id=2) == []


def test_private_pool_is_freed_when_the_request_ends():
    drafter = NGramDrafter(2, 2, is_public_pool=False)
    ask(drafter, [1, 2, 3, 1, 2], request_id=7)
    assert 7 in drafter.private_pools
    drafter.end_request(7)
    assert 7 not in drafter.private_pools and 7 not in drafter.scan_from


def test_match_cut_short_by_the_sequence_end_grows_later():
    drafter = NGramDrafter(3, 1)
    assert ask(drafter, [1, 2, 1]) == [2, 1]  # "1" was followed by only two tokens so far
    assert ask(drafter, [1, 2, 1, 2, 1]) == [2, 1, 2]  # rescanned: now a full-length match


def test_draft_respects_the_step_limit_and_no_match_gives_nothing():
    drafter = NGramDrafter(4, 2)
    assert ask(drafter, [1, 2, 3, 4, 5, 1, 2], limit=2) == [3, 4]
    assert ask(NGramDrafter(4, 2), [1, 2, 3]) == []
    assert ask(NGramDrafter(4, 2), [1]) == []


def test_rejects_non_positive_sizes():
    with pytest.raises(ValueError):
        NGramDrafter(0, 2)
    with pytest.raises(ValueError):
        NGramDrafter(2, 0)


def test_rejects_non_positive_sizes_and_says_which():
    with pytest.raises(ValueError, match="^max_draft_len and max_matching_ngram_size must be >= 1$"):
        NGramDrafter(0, 1)
    one = NGramDrafter(1, 1)  # the smallest sizes are allowed
    assert (one.max_draft_len, one.max_matching_ngram_size) == (1, 1)
    assert ask(one, [4, 5, 4]) == [5]


def test_from_config_passes_every_option_in_place():
    spec = SimpleNamespace(max_draft_len=3, max_matching_ngram_size=5, is_keep_all=False, is_use_oldest=False,
                           is_public_pool=False)
    drafter = NGramDrafter.from_config(spec)
    assert (drafter.max_draft_len, drafter.max_matching_ngram_size, drafter.is_keep_all, drafter.is_use_oldest,
            drafter.is_public_pool) == (3, 5, False, False, False)


def test_the_newest_pair_is_learned():
    # The last token follows the pattern just before it: that pair is the newest the pool can learn.
    drafter = NGramDrafter(2, 1)
    ask(drafter, [1, 2])
    assert drafter.public_pool.matches == {(1,): [(2,)]}
    drafter = NGramDrafter(2, 2)
    ask(drafter, [1, 2, 3])
    assert drafter.public_pool.matches[(1, 2)] == [(3,)]


def test_a_shorter_pattern_is_tried_when_the_longest_has_no_match():
    # tail (5, 1) was never seen, "1" was (followed by 2 3).
    assert ask(NGramDrafter(2, 2), [1, 2, 3, 4, 5, 1]) == [2, 3]
    assert ask(NGramDrafter(2, 3), [1, 2, 3, 4, 5, 1]) == [2, 3]


def test_the_tail_may_be_as_long_as_every_token_but_the_last_one_seen():
    # Request 1 teaches (1 2 3) -> 4, (2 3) -> 4 and later (2 3) -> 5. Request 2 is [1 2 3]: its
    # longest usable tail is (2 3), not all three tokens (a pattern must leave an earlier token).
    drafter = NGramDrafter(1, 3, is_use_oldest=False)
    ask(drafter, [1, 2, 3, 4, 2, 3, 5], request_id=1)
    assert ask(drafter, [1, 2, 3], request_id=2) == [5]
    # and the tail (1 2) of a three-token sequence is used: (1 2) -> 9 beats "2" -> 7.
    drafter = NGramDrafter(1, 2, is_use_oldest=False)
    ask(drafter, [1, 2, 9, 2, 7], request_id=1)
    assert ask(drafter, [5, 1, 2], request_id=2) == [9]


def test_a_pattern_of_all_but_the_last_token_is_learned_once_and_kept():
    # Step 1 [1 2 3] is the only time (1 2) -> 3 is scanned (it leaves the rescan window after).
    drafter = NGramDrafter(1, 2, is_use_oldest=False)
    ask(drafter, [1, 2, 3])
    assert ask(drafter, [1, 2, 3, 2, 5, 1, 2]) == [3]  # "2" alone would say 5 (its newest match)


def test_each_request_is_learned_from_its_own_start():
    drafter = NGramDrafter(2, 2)
    ask(drafter, list(range(10, 30)), request_id=1)
    assert ask(drafter, [1, 2, 3, 1, 2], request_id=2) == [3, 1]


def test_a_step_learns_only_the_pairs_it_has_not_fully_seen():
    # max_draft_len 2 + max_matching_ngram_size 2 - 1 = 3: a step rescans the pairs that start in the
    # last 3 tokens of the previous step, whose matches were cut short; older pairs are complete.
    drafter = NGramDrafter(2, 2)
    seen: list[tuple] = []
    learn = drafter.public_pool.learn
    drafter.public_pool.learn = lambda pattern, match, keep_all: (seen.append(pattern), learn(pattern, match, keep_all))
    ask(drafter, [1, 2, 3, 4, 5, 6, 7, 8])
    assert drafter.scan_from[1] == 5
    seen.clear()
    ask(drafter, [1, 2, 3, 4, 5, 6, 7, 8, 9])
    assert seen == [(6, 7), (7, 8), (6,), (7,), (8,)]
    # Pairs before the window are never scanned again, even if the caller's tokens there changed.
    ask(drafter, [0, 0, 0, 0, 0, 0, 7, 8, 9, 0])
    assert (0, 0) not in drafter.public_pool.matches


def test_keep_one_still_replaces_a_match_cut_short():
    drafter = NGramDrafter(3, 1, is_keep_all=False)
    assert ask(drafter, [1, 2, 1]) == [2, 1]
    assert ask(drafter, [1, 2, 1, 2, 1]) == [2, 1, 2]
    assert drafter.public_pool.matches[(1,)] == [(2, 1, 2)]


def test_ending_a_request_it_never_saw_is_harmless():
    public = NGramDrafter(2, 2)
    ask(public, [1, 2, 3], request_id=4)
    public.end_request(4)  # a public pool has no private pool to free
    public.end_request(99)
    assert 4 not in public.scan_from and len(public.public_pool) > 0
