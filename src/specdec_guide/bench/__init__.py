"""Benchmarking: prompts, the AIPerf plugin for Triton's llmapi model, and reading AIPerf's exports."""
