"""What each pipeline notebook leaves behind: ``summary.json``, the material of its report section."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from evalkit.contracts.base import SchemaNamed, SnakeContract
from evalkit.contracts.subject import JudgeSettings
from evalkit.contracts.types import NonEmptyStr

Cell = str | int | float | bool | None


class Metric(SnakeContract):
    """One headline number (or short text) shown as a tile."""

    name: NonEmptyStr
    value: Cell
    unit: str | None = None
    note: str | None = None


class Table(SnakeContract):
    """A small table: column names and rows of plain cells."""

    title: NonEmptyStr
    columns: list[str] = Field(min_length=1)
    rows: list[list[Cell]]


class Chart(SnakeContract):
    """A Vega-Lite chart, as the JSON spec altair produces (data inlined)."""

    title: NonEmptyStr
    spec: dict[str, Any]
    caption: str | None = None


class Figure(SnakeContract):
    """A drawing the notebook wrote (an SVG file in its output folder), embedded in the report."""

    title: NonEmptyStr
    path: Annotated[str, Field(pattern=r"^[^/\\]+\.svg$")]
    """The file's name inside the notebook's output folder."""
    caption: str | None = None


GateVerdict = Literal["pass", "incomplete", "fail"]
"""A gate's verdict, worst first: fail > incomplete > pass (as on a scorecard)."""


class CriterionHeadline(SnakeContract):
    """One criterion's headline pass rate: corrected for its judge where a calibration covers it.

    ``rate`` is the number to read (corrected when ``corrected``, else observed) and ``lo``/``hi`` its
    interval; ``observed`` is the raw pass rate over ``n`` decided items.
    """

    criterion: NonEmptyStr
    rate: float | None = Field(ge=0, le=1)
    lo: float | None = Field(default=None, ge=0, le=1)
    hi: float | None = Field(default=None, ge=0, le=1)
    corrected: bool = False
    observed: float | None = Field(default=None, ge=0, le=1)
    n: int | None = Field(default=None, ge=0)
    status: str | None = None
    """How far the number can be trusted: ``validated``/``unvalidated`` judge, ``deterministic``, ..."""
    judge: str | None = None
    """The judge behind the verdicts (model and prompt digest), so a change of judge can be marked."""


class ModeHeadline(SnakeContract):
    """One failure mode's rate among the reviewed traces, with its interval."""

    mode: NonEmptyStr
    name: str | None = None
    rate: float | None = Field(ge=0, le=1)
    lo: float | None = Field(default=None, ge=0, le=1)
    hi: float | None = Field(default=None, ge=0, le=1)
    count: int = Field(ge=0)
    reviewed: int = Field(ge=0)


class Headline(SnakeContract):
    """The numbers a run is compared by: per-criterion pass rates, failure-mode rates, the gate.

    Each notebook fills the part it computes (calibration: corrected rates; error analysis: failure
    modes; scorecard: the gate and the rates of criteria decided by code); batch index pages and the
    run history read them from the summaries, so each number is computed once, where it is shown.
    """

    criteria: list[CriterionHeadline] = Field(default_factory=list)
    failure_modes: list[ModeHeadline] = Field(default_factory=list)
    gate: GateVerdict | None = None
    gate_reasons: list[str] = Field(default_factory=list)


class NotebookSummary(SnakeContract, SchemaNamed):
    """The summary one notebook writes at its end; the report renders a section from it."""

    notebook: NonEmptyStr
    title: NonEmptyStr
    subject: NonEmptyStr
    metrics: list[Metric] = Field(default_factory=list)
    findings: list[str] = Field(default_factory=list)
    charts: list[Chart] = Field(default_factory=list)
    tables: list[Table] = Field(default_factory=list)
    figures: list[Figure] = Field(default_factory=list)
    conclusion: NonEmptyStr
    headline: Headline | None = None
    """This notebook's share of the run's headline numbers (absent when it computes none)."""


class InputDigest(SnakeContract):
    """One input file of a run, named as the subject file names it, with its SHA-256."""

    field: str
    path: str
    sha256: Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]
    bytes: int = Field(ge=0)


class NotebookRun(SnakeContract):
    """How one notebook of a run went; a failure names the cell (0-based index) and the error."""

    name: str
    status: Literal["ok", "failed"]
    error: str | None = None
    cell: int | None = None
    parameters: dict[str, Any] = Field(default_factory=dict)
    """The subject's parameters for this notebook, as written in the subject file."""


class RunManifest(SnakeContract):
    """``run.json``: what a run evaluated, with what, and how each notebook went."""

    subject: str
    evalkit_version: str
    run_at: str | None = None
    judge: JudgeSettings | None = None
    seed: int
    inputs: list[InputDigest]
    notebooks: list[NotebookRun]
