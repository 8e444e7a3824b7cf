"""Thinking and reasoning blocks: kept for the reader, their opaque signatures left out.

Models that think before they answer send their reasoning back with an encrypted signature (Anthropic
``thinking`` blocks' ``signature``, OpenAI reasoning items' ``encrypted_content``, Gemini's
``thoughtSignature``): often a kilobyte or more of base64 that no person or judge can read, repeated
in every later call's input. Importers keep the reasoning text and replace the signature with a note
of its length, counted in the import report; the review page shows the reasoning collapsed.
"""

from __future__ import annotations

from typing import Any

from evalkit.traces.report import ImportReport

SIGNATURE_KEYS = ("signature", "encrypted_content", "thoughtSignature")
"""Fields holding an opaque, encrypted copy of a model's reasoning."""

REASONING_BLOCKS = ("thinking", "redacted_thinking", "reasoning")
"""Content block types that hold a model's reasoning (kept, shown collapsed)."""

SKIPPED_SIGNATURES = "opaque reasoning signatures (encrypted, unreadable; replaced by a note of their length)"


def without_signature(block: dict[str, Any], report: ImportReport) -> dict[str, Any]:
    """``block`` with each signature field replaced by a note of its length (the same object when it has none).

    Args:
        block: a content block or item that may carry a signature.
        report: counts each signature left out.
    """
    found = [key for key in SIGNATURE_KEYS if isinstance(block.get(key), str) and block[key]]
    if not found:
        return block
    out = dict(block)
    for key in found:
        out[key] = f"[{len(block[key]):,} characters left out]"
        report.skipped(SKIPPED_SIGNATURES)
    return out
