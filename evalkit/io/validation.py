"""A value checked against a pydantic model, each problem located by its field path.

Every problem renders as ``FILE[:LINE]: field.path: message`` (:class:`evalkit.errors.InputError`), whether
the value came from a contract file (:mod:`evalkit.contract_files`), an append-only store or an importer.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from evalkit.errors import InputError
from evalkit.io.yaml_text import line_of

M = TypeVar("M", bound=BaseModel)

_PATH_PREFIX = re.compile(r"^([A-Za-z_$][\w$]*(?:\[\d+\]|\.[A-Za-z_$][\w$]*)*): (.+)$", re.S)


def loc_to_path(loc: Iterable[Any]) -> str:
    """A pydantic error location as a field path: ``observations[3].type``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def _join(prefix: str, path: str) -> str:
    if not prefix:
        return path
    if not path:
        return prefix
    return prefix + path if path.startswith("[") else f"{prefix}.{path}"


def validation_problems(exc: ValidationError, prefix: str = "") -> list[tuple[str, str]]:
    """``(field path, message)`` for each error in a pydantic ValidationError.

    Cross-field rules raise ``ValueError("field.path: message")``; that path is appended to the
    location pydantic reports, so the user sees the field the rule is about.
    """
    problems: list[tuple[str, str]] = []
    for err in exc.errors(include_url=False):
        loc = err["loc"]
        if err["type"] in ("missing",):
            msg = "required field is missing"
        elif err["type"] == "extra_forbidden":
            msg = "unknown field (this shape is closed)"
        else:
            msg = err["msg"]
        if err["type"] == "value_error" and msg.startswith("Value error, "):
            msg = msg[len("Value error, "):]
        path = loc_to_path(loc)
        match = _PATH_PREFIX.match(msg)
        if match:
            path, msg = _join(path, match.group(1)), match.group(2)
        if err["type"] == "literal_error":
            msg = f"{msg} (got {err['input']!r})"
        problems.append((_join(prefix, path), msg))
    return problems



def validate_value(model: type[M], value: Any, *, file: str, line: int | None = None,
                   prefix: str = "", lines: dict[str, int] | None = None) -> tuple[M | None, list[InputError]]:
    """Validate one value; the model, or None and the located problems.

    Args:
        model: the contract.
        value: the value read.
        file: where it was read, for the problems.
        line: the line the value starts on.
        prefix: the value's place in its document (``[3]`` for an item of a list).
        lines: the line of each field path of the document (YAML): a problem is placed on its field's line.
    """
    try:
        return model.model_validate(value), []
    except ValidationError as exc:
        return None, [InputError(msg, file=file, line=line_of(lines or {}, path, line), path=path or None)
                      for path, msg in validation_problems(exc, prefix)]
