"""The CPU reference engine: a stand-in for TensorRT-LLM behind Triton's "llmapi" model contract.

``config`` reads the llmapi ``model.yaml``; ``requests`` validates one request's fields (the
llmapi input names); ``core`` runs the draft -> verify -> accept loop of
:mod:`specdec_guide.speculation`; ``model.py`` is the Triton Python-backend adapter that
``specdec-guide repo render --engine cpu`` copies into a model repository.
"""

from specdec_guide.engine.config import ConfigError, EngineConfig, SpeculativeConfig, load_config
from specdec_guide.engine.requests import GenerateRequest, RequestError, parse_request

__all__ = [
    "ConfigError",
    "EngineConfig",
    "GenerateRequest",
    "RequestError",
    "SpeculativeConfig",
    "load_config",
    "parse_request",
]
