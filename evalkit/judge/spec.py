"""Reading judge specs: YAML (one document per criterion, or a list), validated strictly."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from evalkit.contract_files import iter_located_models
from evalkit.contracts.judge import JudgeSpec, spec_id_repeated
from evalkit.errors import InputError


def read_judge_specs(path: str | Path) -> list[JudgeSpec]:
    """Every judge spec in a YAML (or JSON) file, each remembering the file and line it came from.

    Raises:
        InputError: the file cannot be read, a spec does not fit the contract, or two specs share an id;
            the error names the file, the line and the field.
    """
    file = str(path)
    specs: list[JudgeSpec] = []
    first_line: dict[str, int | None] = {}
    for spec, line, prefix in iter_located_models(path, JudgeSpec):
        if spec.id in first_line:
            raise InputError(spec_id_repeated(spec.id, first_line[spec.id]), file=file,
                             line=line, path=f"{prefix}.id" if prefix else "id")
        first_line[spec.id] = line
        spec._source = (file, line)
        specs.append(spec)
    if not specs:
        raise InputError("no judge spec found", file=file)
    return specs


def example_gaps(spec: JudgeSpec) -> list[str]:
    """What the spec's few-shot examples lack of the seed's set: at least one clear pass, one clear fail and
    one borderline example (from the train split). Empty when it has all three; a warning, not an error."""
    clear = {e.label for e in spec.examples if not e.borderline}
    gaps = [f"no clear {label} example" for label in ("pass", "fail") if label not in clear]
    if not any(e.borderline for e in spec.examples):
        gaps.append("no borderline example (borderline: true)")
    return gaps


def example_warning(spec: JudgeSpec) -> str | None:
    """One line for a person when the spec lacks examples (see :func:`example_gaps`), else None."""
    gaps = example_gaps(spec)
    if not gaps:
        return None
    return (f"judge spec {spec.id}: {', '.join(gaps)}: the seed's judge prompt needs one clear pass, one clear "
            "fail and one borderline example from the train split (examples: in the spec); without them the "
            "judge does not know what counts as a failure here")

def read_judge_spec_files(paths: Iterable[str | Path]) -> list[JudgeSpec]:
    """The specs of several files, in order; a criterion may have one spec across them all.

    Raises:
        InputError: as :func:`read_judge_specs`, or a criterion that already has a spec in an earlier file.
    """
    specs: list[JudgeSpec] = []
    seen: dict[str, str] = {}
    for path in paths:
        for spec in read_judge_specs(path):
            if spec.id in seen:
                raise InputError(f"criterion {spec.id!r} already has a spec in {seen[spec.id]}", file=str(path),
                                 line=spec.source[1], path="id")
            seen[spec.id] = str(path)
            specs.append(spec)
    return specs
