"""Which client a model spec is called through: the light OpenAI-compatible one or litellm.

`openai/NAME` (with or without `--api-base`: a local server or OpenAI), OpenAI's own model
names (`gpt-*`, `o1`, `o3-mini`, `chatgpt-*`) and the embedded model (`local[:GGUF]`) take
`OpenAIHTTPModel`; every other provider (`anthropic/`, `gemini/`, `bedrock/`, `ollama/`,
a bare name litellm resolves) keeps litellm. Setting `model_client` forces one.
"""

from __future__ import annotations

import re
from enum import StrEnum


class ModelClient(StrEnum):
    """The `--model-client` setting: which library calls the model."""

    AUTO = "auto"  # decided per spec by `client_for`
    OPENAI = "openai"  # OpenAIHTTPModel (httpx)
    LITELLM = "litellm"  # LiteLLMModel


CHOICES = tuple(c.value for c in ModelClient)
# OpenAI's own model names, written without a provider prefix.
OPENAI_NAMES = re.compile(r"^(gpt-|chatgpt-|o\d)", re.IGNORECASE)


def client_for(spec: str, choice: ModelClient | str = ModelClient.AUTO) -> ModelClient:
    """The client (OPENAI or LITELLM, never AUTO) that calls model *spec* under *choice*.

    Raises ValueError for a *choice* that is not a `ModelClient`."""
    try:
        chosen = ModelClient(str(choice).strip().lower())
    except ValueError:
        raise ValueError(
            f"model client must be one of {', '.join(CHOICES)}, not {choice!r}"
        ) from None
    if chosen is not ModelClient.AUTO:
        return chosen
    if spec == "local" or spec.startswith("local:"):
        return ModelClient.OPENAI
    provider, slash, _ = spec.partition("/")
    if slash:
        return ModelClient.OPENAI if provider == "openai" else ModelClient.LITELLM
    return ModelClient.OPENAI if OPENAI_NAMES.match(spec) else ModelClient.LITELLM
