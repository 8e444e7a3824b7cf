"""A subject's per-notebook parameters, checked against each notebook's own parameters cell.

A notebook declares what can be set in its cell tagged ``parameters`` (``by = "intent"  # why``). A
subject sets values by notebook name (``parameters: {01_error_analysis: {by: channel}}``). Before any
notebook runs, every name is looked up in that cell: an unknown name is an error naming the notebook
and the names it does take, and a value whose type differs from a literal default's is an error too.
Values of parameters named ``*_file`` or ``*_path`` are paths relative to the subject file; the
notebook receives them resolved, so a notebook never guesses what a relative path is relative to.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from evalkit.contracts.subject import PATH_PARAMETER_SUFFIXES, PIPELINE_PARAMETERS
from evalkit.errors import InputError

__all__ = ["declared_parameters", "notebook_parameters"]


def declared_parameters(notebook: Path) -> dict[str, str]:
    """The parameters a notebook declares, name to default as written in its parameters cell."""
    import papermill

    return {name: info["default"] for name, info in papermill.inspect_notebook(str(notebook)).items()}


def _literal(source: str) -> tuple[bool, Any]:
    try:
        return True, ast.literal_eval(source)
    except (ValueError, SyntaxError):  # an expression default: its type is not known before running
        return False, None


def _type_mismatch(value: Any, default_source: str) -> str | None:
    """Why ``value`` cannot replace the default (None when it can): types follow a literal default."""
    known, default = _literal(default_source)
    if not known or default is None or value is None:
        return None
    if isinstance(default, bool) or isinstance(value, bool):
        ok = isinstance(value, bool) and isinstance(default, bool)
    elif isinstance(default, int | float):
        ok = isinstance(value, int | float) and (isinstance(default, float) or isinstance(value, int))
    else:
        ok = isinstance(value, type(default))
    return None if ok else f"expects {type(default).__name__} like its default {default_source}, " \
                           f"got {type(value).__name__} {value!r}"


def notebook_parameters(subject_file: Path, parameters: dict[str, Any], notebook: Path) -> dict[str, Any]:
    """The values to inject into one notebook, checked and with paths resolved.

    Args:
        subject_file: the subject file (its folder anchors relative paths; named in errors).
        parameters: the subject's ``parameters`` for this notebook, as written.
        notebook: the notebook file; its name is the key in the subject's ``parameters``.

    Returns:
        Name to value; ``*_file`` and ``*_path`` values as absolute paths.

    Raises:
        InputError: a name the notebook's parameters cell does not declare, one the pipeline sets,
            or a value of the wrong type; located at ``parameters.NOTEBOOK.NAME``.
    """
    name = notebook.stem
    if not parameters:
        return {}
    declared = declared_parameters(notebook)
    settable = [p for p in declared if p not in PIPELINE_PARAMETERS]
    values: dict[str, Any] = {}
    for key, value in parameters.items():
        where = f"parameters.{name}.{key}"
        if key in PIPELINE_PARAMETERS:
            raise InputError(f"{key} is set by the pipeline, not the subject", file=str(subject_file), path=where)
        if key not in declared:
            known = ", ".join(settable) if settable else "none besides subject_file, output_dir and run_at"
            raise InputError(f"notebook {name} has no parameter {key!r} (its parameters: {known})",
                             file=str(subject_file), path=where)
        problem = _type_mismatch(value, declared[key])
        if problem:
            raise InputError(f"notebook {name}: {key} {problem}", file=str(subject_file), path=where)
        if key.endswith(PATH_PARAMETER_SUFFIXES) and isinstance(value, str):
            value = str((subject_file.parent / value).resolve())
        values[key] = value
    return values
