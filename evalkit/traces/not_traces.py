"""Recognising files no trace format reads (yet), to say plainly what they are and what would help.

When no trace format fits a file, :func:`explain_not_traces` is asked whether the first record is a
known kind of non-trace data; its answer replaces the generic "pass --format" hint, so the user learns
what the file is instead of trying every ``--format``.
"""

from __future__ import annotations

from typing import Any

__all__ = ["explain_not_traces"]


def _is_pairwise_judgment(value: dict[str, Any]) -> bool:
    """LLMBar / MT-Bench style: an instruction, two candidate outputs and a preference."""
    pairs = (("output_1", "output_2"), ("output_a", "output_b"), ("response_a", "response_b"),
             ("model_a", "model_b"))
    has_pair = any(a in value and b in value for a, b in pairs)
    has_preference = any(k in value for k in ("label", "winner", "preference", "results", "judge"))
    return has_pair and has_preference


def _needs_plugin(value: dict[str, Any]) -> str | None:
    """The agent log kinds the example plug-in in ``examples/plugins`` reads."""
    if isinstance(value.get("trajectory"), list) and isinstance(value.get("history"), list):
        return "a SWE-agent trajectory"
    if isinstance(value.get("id"), int) and value.get("source") in ("agent", "user", "environment") and (
            "action" in value or "observation" in value):
        return "an OpenHands event stream"
    return None


def explain_not_traces(value: Any) -> str | None:
    """Why ``value`` (a file's first record) is not trace data, or None when it is not a known kind.

    Args:
        value: the first JSON value of the file (an element, for a top-level array).

    Returns:
        A sentence for the user, or None.
    """
    if not isinstance(value, dict):
        return None
    plugin = _needs_plugin(value)
    if plugin is not None:
        return (f"this looks like {plugin}, which evalkit reads through a trace-format plug-in: install the "
                "example one with `pip install -e examples/plugins` (from an evalkit checkout)")
    if _is_pairwise_judgment(value):  # the pairwise format read it if it had a prompt and two answers of text
        from evalkit.traces.pairwise import ANSWER_PAIRS
        from evalkit.traces.single_turn import PROMPT_KEYS

        keys = ", ".join(k for k in value if not k.startswith("_"))
        return ("these records look like pairwise judge results (two answers and a preference; keys: "
                f"{keys}), but the pairwise format needs a prompt field ({', '.join(PROMPT_KEYS)}) and a pair "
                f"of answers ({', '.join('/'.join(p) for p in ANSWER_PAIRS)}), all text: rename the fields, "
                "or audit the judge that made them with `evalkit judge audit --pairwise FILE`")
    return None
