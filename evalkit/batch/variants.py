"""A batch run's own subject file: the subject with the run's values set, written into the batch folder.

The notebooks read the subject file again in their kernels, so a run whose values differ from its subject's
(a sweep, an override, a name of its own) needs a file of its own: ``OUT/subjects/NAME.json``. Its paths are
rewritten to lead from there to the same files, and before it is written every input file it names is held
to the original subject's folder, as :func:`evalkit.subjects.load_subject` holds a subject's (unless
outside paths are allowed). The run then reads it with outside paths allowed: the check is done here.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from evalkit.batch.plan import BatchRun
from evalkit.contracts.subject import Subject
from evalkit.errors import InputError
from evalkit.io import atomic_write_text, canonical_dumps
from evalkit.subjects import check_inputs

SUBJECTS_FOLDER = "subjects"


def _with_values(data: dict[str, Any], values: dict[str, Any]) -> dict[str, Any]:
    out = {**data, "parameters": {nb: dict(p) for nb, p in data.get("parameters", {}).items()}}
    for key, value in values.items():
        if "." in key:
            notebook, name = key.split(".", 1)
            out["parameters"].setdefault(notebook, {})[name] = value
        else:
            out[key] = value
    if not out["parameters"]:
        del out["parameters"]
    return out


def _path_slots(subject: Subject) -> list[tuple[str, str]]:
    """Every path the subject names (input files and ``*_path`` folders), by field path, as written."""
    return [*subject.input_paths().items(), *subject.path_parameters(("_path",)).items()]


def _set(data: dict[str, Any], field: str, value: str) -> None:
    if field.startswith("parameters."):
        _, notebook, name = field.split(".", 2)
        data["parameters"][notebook][name] = value
        return
    match = re.fullmatch(r"(\w+)\[(\d+)\]", field)
    if match:
        data[match.group(1)][int(match.group(2))] = value
    else:
        data[field] = value


def write_run_subject(run: BatchRun, out: Path, *, allow_outside: bool, batch_file: Path | None) -> Path:
    """The subject file ``run`` executes: its own subject's, or one written for it (see the module).

    Raises:
        InputError: the values make an invalid subject, or name an input outside the subject's folder or
            missing (named by the batch entry's field).
    """
    from evalkit.contract_files import read_model
    from evalkit.io.validation import validate_value

    if not run.derived:
        return run.subject
    where = f"subjects[{run.entry}]." if run.entry is not None else ""
    file = str(batch_file) if batch_file else str(run.subject)
    data = read_model(run.subject, Subject).to_json_obj()
    data.pop("$schema", None)  # named relative to the subject's folder; the written file is elsewhere
    data = _with_values(data, run.values)
    data["name"] = run.name
    subject, problems = validate_value(Subject, data, file=file, prefix=where.rstrip("."))
    if problems:
        raise problems[0]
    base = run.subject.parent
    check_inputs(subject, base, allow_outside=allow_outside, file=file, where=where)
    folder = out / SUBJECTS_FOLDER
    for field, rel in _path_slots(subject):
        if not Path(rel).is_absolute():
            _set(data, field, Path(os.path.relpath(base / rel, folder)).as_posix())
    path = folder / f"{run.name}.json"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot write the run's subject file: {exc.strerror or exc}", file=str(folder)) from None
    atomic_write_text(path, canonical_dumps(data))
    return path

