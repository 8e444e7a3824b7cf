"""The judge reply's default token cap, in a module of its own.

Both the providers (which send the cap) and the journal (which keys a call by it) need this number; held
here, neither imports the other for it, so the providers may use the journal's line store without a circle.
"""

from __future__ import annotations

DEFAULT_MAX_TOKENS = 1024
"""The reply's token cap when the pin names none (``JudgePin.max_tokens``' default): a critique with its refs
and a verdict fits well within it, and a model that rambles is cut off rather than billed for pages."""

__all__ = ["DEFAULT_MAX_TOKENS"]
