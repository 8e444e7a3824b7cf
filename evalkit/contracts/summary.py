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
