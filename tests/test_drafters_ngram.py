"""The NGram drafter's four options, each shown on a hand-made token sequence."""

from __future__ import annotations

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
