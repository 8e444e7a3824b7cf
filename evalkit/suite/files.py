"""Reading and writing a suite file, and the append-only rule checked on every write.

A suite file never loses a case: writing a dataset that lacks a case the file on disk has, or holds a
case changed under the same id, is refused naming those case ids. Files are written atomically as
canonical JSON, so the same suite always has the same bytes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from evalkit.contract_files import read_model
from evalkit.contracts.dataset import Dataset
from evalkit.errors import AppendOnlyViolation
from evalkit.io import InputError, atomic_write_text, canonical_dumps
from evalkit.suite.ids import case_id

_SHOWN_IDS = 20




def read_dataset(path: str | Path) -> Dataset:
    """Read a suite file (JSON or YAML) as a :class:`Dataset`.

    Raises:
        InputError: naming the file and the first problem's field.
    """
    return read_model(path, Dataset)


def _ids(ids: list[str]) -> str:
    shown = ", ".join(ids[:_SHOWN_IDS])
    return shown + (f" and {len(ids) - _SHOWN_IDS} more" if len(ids) > _SHOWN_IDS else "")


def assert_append_only(before: Dataset, after: Dataset, *, file: str | None = None) -> None:
    """Refuse ``after`` unless it keeps every case of ``before`` unchanged, its version did not go down, and a
    changed case set comes with a higher version (the seed's dataset: "bumped on every append"), so a version
    names one set of cases: a run on version 3 is a run on the same cases as any other run on version 3.

    Raises:
        AppendOnlyViolation: naming the missing (or rewritten) case ids.
    """
    now = {c.id: c.to_json_obj() for c in after.cases}
    missing = [c.id for c in before.cases if c.id not in now]
    if missing:
        raise AppendOnlyViolation(f"refused: the suite is append-only and this write would lose "
                                  f"{len(missing)} case(s) the file has: {_ids(missing)}", file=file)
    changed = [c.id for c in before.cases if now[c.id] != c.to_json_obj()]
    if changed:
        raise AppendOnlyViolation(f"refused: the suite is append-only and this write would rewrite "
                                  f"{len(changed)} case(s) the file has: {_ids(changed)}", file=file)
    if after.version < before.version:
        raise AppendOnlyViolation(f"refused: version {after.version} is below the file's {before.version}",
                                  file=file, path="version")
    added = [c.id for c in after.cases if c.id not in {b.id for b in before.cases}]
    if added and after.version == before.version:
        raise AppendOnlyViolation(f"refused: {len(added)} case(s) added ({_ids(added)}) under the file's version "
                                  f"{before.version}; a changed case set needs a new version: set version to "
                                  f"{before.version + 1}", file=file, path="version")


def write_dataset(path: str | Path, dataset: Dataset) -> Path:
    """Write ``dataset`` to ``path`` atomically as canonical JSON, after checking the append-only rule.

    Raises:
        AppendOnlyViolation: the file on disk has a case ``dataset`` lacks or changes.
        InputError: the file on disk is not a readable suite (it is never overwritten then).
    """
    target = Path(path)
    if target.exists():
        assert_append_only(read_dataset(target), dataset, file=str(target))
    atomic_write_text(target, canonical_dumps(dataset.to_json_obj()))
    return target


@dataclass(frozen=True)
class SuiteCheck:
    """What ``check_dataset`` found: problems (each an InputError) and counts per source."""

    cases: int
    by_source: dict[str, int]
    problems: list[InputError] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def check_dataset(path: str | Path) -> SuiteCheck:
    """Check a suite file: readable, ids unique and derived from content, tuple values among the dimensions.

    Derived cases carry an ``outcome`` tuple that is not one of the designer's dimensions, so only seed
    and synthetic cases are checked against them.

    Raises:
        InputError: the file is not a readable suite at all.
    """
    file = str(path)
    dataset = read_dataset(path)
    problems: list[InputError] = []
    values = {d.name: set(d.values) for d in dataset.dimensions}
    seen: dict[str, int] = {}
    by_source: dict[str, int] = {}
    for i, case in enumerate(dataset.cases):
        by_source[case.source] = by_source.get(case.source, 0) + 1
        if case.id in seen:
            problems.append(InputError(f"duplicate case id {case.id!r} (first at cases[{seen[case.id]}])",
                                       file=file, path=f"cases[{i}].id"))
        seen.setdefault(case.id, i)
        want = case_id(case.tuple, case.query)
        if case.id != want:
            problems.append(InputError(f"id {case.id!r} does not match its tuple and query (expected {want!r})",
                                       file=file, path=f"cases[{i}].id"))
        if case.source == "derived":
            continue
        for name, value in sorted(case.tuple.items()):
            if name not in values:
                problems.append(InputError(f"{name!r} is not a dimension of the suite",
                                           file=file, path=f"cases[{i}].tuple.{name}"))
            elif value not in values[name]:
                problems.append(InputError(f"{value!r} is not a value of dimension {name!r}",
                                           file=file, path=f"cases[{i}].tuple.{name}"))
    return SuiteCheck(len(dataset.cases), dict(sorted(by_source.items())), problems)
