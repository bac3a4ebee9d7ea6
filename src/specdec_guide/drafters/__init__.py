"""Drafters for the CPU engine, each behind ``Drafter.propose(DraftRequest) -> list[int]``.

- :mod:`.ngram`: TensorRT-LLM's NGram pool (prompt lookup) with its four options;
- :mod:`.draft_model`: greedy proposals from a draft checkpoint (Draft/Target);
- :mod:`.user_provided`: runs a TensorRT-LLM-style ``prepare_draft_tokens`` drafter unchanged.

Importing this package does not import torch; the modules that need it do.
"""
