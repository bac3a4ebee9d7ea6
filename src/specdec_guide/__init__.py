"""specdec_guide: the checks, launcher and CPU reference engine behind the speculative-decoding field guide."""

__version__ = "0.1.0"
