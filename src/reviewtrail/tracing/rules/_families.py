"""Model families, from one data table.

A model name belongs to a family only when exactly one family's patterns match it
(case-insensitively, on word boundaries); otherwise it is ``unknown``. Route
prefixes (``openrouter/``, ``ollama/``, ``bedrock/``, ``azure/``) never decide the
family, the model name does: none of them holds a family token on a word boundary
(``ollama`` is not ``llama``), so they need no stripping.

The table follows the reference review gate's (``review_gate.py``) and extends it with
more model names. Besides model names it holds the host and tool names that stand for
one vendor's models: ``codex`` and ``oracle``/``oracle-pro`` are OpenAI's, ``volcengine``
is ByteDance's. A host that serves several vendors (``copilot``, ``openrouter``) is in
no family.
"""

from __future__ import annotations

import re
from functools import cache

__all__ = ["FAMILIES", "ROUTE_PREFIXES", "UNKNOWN", "family_of", "model_family"]

UNKNOWN = "unknown"
ROUTE_PREFIXES = ("openrouter/", "ollama/", "bedrock/", "azure/")

# family -> name tokens. A token matches when it is not preceded by a letter or digit and
# not followed by a letter (a digit may follow: "gpt4o", "o3", "qwen2.5", "glm4").
FAMILIES: dict[str, tuple[str, ...]] = {
    "openai": ("openai", "gpt", "chatgpt", "codex", "oracle", "o1", "o3", "o4", "davinci", "text-embedding"),
    "anthropic": ("anthropic", "claude", "opus", "sonnet", "haiku"),
    "google": ("google", "gemini", "gemma", "palm", "bard", "learnlm"),
    "deepseek": ("deepseek",),
    "xai": ("xai", "x-ai", "grok"),
    "moonshot": ("moonshot", "moonshotai", "kimi"),
    "qwen": ("qwen", "qwq", "qvq", "tongyi"),
    "zhipu": ("zhipu", "zhipuai", "glm", "chatglm", "codegeex"),
    "minimax": ("minimax", "abab"),
    "xiaomi": ("xiaomi", "mimo"),
    "bytedance": ("bytedance", "volcengine", "doubao", "skylark", "seed-oss"),
    "meta": ("meta", "meta-llama", "llama", "codellama"),
    "mistral": ("mistral", "mistralai", "mixtral", "codestral", "magistral", "devstral", "pixtral", "ministral"),
}


def _pattern(tokens: tuple[str, ...]) -> re.Pattern[str]:
    alternatives = "|".join(re.escape(t) for t in tokens)  # order is free: only "is there a match" counts
    return re.compile(rf"(?<![a-z0-9])(?:{alternatives})(?![a-z])")


_PATTERNS = {family: _pattern(tokens) for family, tokens in FAMILIES.items()}


@cache
def model_family(name: str | None) -> str:
    """The one family whose patterns match ``name``, else ``unknown`` (cached)."""
    return family_of(name)


def family_of(name: str | None) -> str:
    """The rule behind :func:`model_family`, uncached."""
    if not name:
        return UNKNOWN
    model = name.lower()  # surrounding space needs no stripping: it is a word boundary
    matched = {family for family, pattern in _PATTERNS.items() if pattern.search(model)}
    return matched.pop() if len(matched) == 1 else UNKNOWN
