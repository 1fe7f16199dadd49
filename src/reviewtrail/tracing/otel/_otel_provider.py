"""``gen_ai.provider.name`` for a reviewer call: hosting platform, model family or backend. Pure."""

from __future__ import annotations

from collections.abc import Iterable

from reviewtrail.tracing.rules._families import FAMILIES, UNKNOWN, model_family

__all__ = ["PLATFORMS", "genai_provider_name"]

# Our model families -> the well-known ``gen_ai.provider.name`` values of the semantic conventions.
_FAMILY_PROVIDER = {
    "openai": "openai",
    "anthropic": "anthropic",
    "google": "gcp.gemini",
    "deepseek": "deepseek",
    "xai": "x_ai",
    "mistral": "mistral_ai",
}
# Hosting platforms with their own well-known value: the telemetry flavour is the platform's,
# whatever model family it serves. Matched against the backend name.
PLATFORMS = {
    "bedrock": "aws.bedrock",
    "aws-bedrock": "aws.bedrock",
    "aws.bedrock": "aws.bedrock",
    "vertex": "gcp.vertex_ai",
    "vertex-ai": "gcp.vertex_ai",
    "vertex_ai": "gcp.vertex_ai",
    "gcp.vertex_ai": "gcp.vertex_ai",
    "azure-openai": "azure.ai.openai",
    "azure.ai.openai": "azure.ai.openai",
    "azure-ai-inference": "azure.ai.inference",
    "azure.ai.inference": "azure.ai.inference",
    "groq": "groq",
    "perplexity": "perplexity",
    "cohere": "cohere",
    "watsonx": "ibm.watsonx.ai",
    "ibm.watsonx.ai": "ibm.watsonx.ai",
}
# Backend names whose family ``model_family`` cannot tell from the name alone.
_BACKEND_FAMILY = {"codex": "openai"}


# --- provider ------------------------------------------------------------------------------------


def genai_provider_name(*, family: str | None, backend: str | None, models: Iterable[str | None] = ()) -> str:
    """The ``gen_ai.provider.name`` for a call.

    1. a hosting platform with a well-known value wins (backend ``bedrock``, ``vertex``,
       ``groq``..., or a model routed ``bedrock/...`` / ``azure/...``);
    2. else the model family, mapped to its well-known value (``google`` -> ``gcp.gemini``,
       ``xai`` -> ``x_ai``, ``mistral`` -> ``mistral_ai``...), or the family name itself;
    3. else the family the backend name implies (``grok`` -> ``x_ai``, ``codex`` -> ``openai``);
    4. else the backend name, else ``unknown``.
    """
    route = (backend or "").strip().lower()
    if route in PLATFORMS:
        return PLATFORMS[route]
    names = [m.strip().lower() for m in models if isinstance(m, str) and m.strip()]
    known = family if family in FAMILIES else UNKNOWN
    if known == UNKNOWN:
        known = next((f for f in (model_family(n) for n in names) if f != UNKNOWN), UNKNOWN)
    for name in names:
        if name.startswith("bedrock/"):
            return "aws.bedrock"
        if name.startswith("azure/"):
            return "azure.ai.openai" if known == "openai" else "azure.ai.inference"
    if known != UNKNOWN:
        return _FAMILY_PROVIDER.get(known, known)
    if route:
        implied = _BACKEND_FAMILY.get(route) or model_family(route)
        if implied != UNKNOWN:
            return _FAMILY_PROVIDER.get(implied, implied)
        return route
    return UNKNOWN
