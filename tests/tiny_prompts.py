"""Prompts for the tiny random models' engine tests: short, and each one repeats something.

Shared by the engine and the estimate tests, so that both exercise the same n-gram shapes
(a repeated definition, repeated words, a repeated short pattern, one character, repeated JSON keys).
"""

TINY_PROMPTS = [
    "def add(a, b):\n    return a + b\n\ndef add(",
    "the cat sat on the mat. the cat",
    "abc abc abc",
    "Q",
    '{"name": "x", "name": ',
]
