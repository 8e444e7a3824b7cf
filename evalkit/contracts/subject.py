"""The subject file: what the pipeline evaluates, where its files are, and how the judge is pinned.

Paths are relative to the subject file. The judge is pinned to one model at temperature 0 so reruns
are comparable (and, with a cache, byte-identical).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, field_validator

from evalkit.contracts.base import SnakeContract

Slug = Annotated[str, Field(pattern=r"^[a-z0-9]+(?:[-_][a-z0-9]+)*$", max_length=64)]
RelPath = Annotated[str, Field(min_length=1)]


class JudgeSettings(SnakeContract):
    """The judge every criterion runs under: provider, pinned model id, temperature 0."""

    provider: Annotated[str, Field(min_length=1)]
    model: Annotated[str, Field(min_length=1)]
    temperature: float = Field(default=0, ge=0, le=0, description="pinned to 0 for reproducible verdicts")


class Subject(SnakeContract):
    """One agent under evaluation and the inputs the notebooks read."""

    name: Slug
    description: str | None = None
    traces: RelPath
    labels: RelPath | None = None
    verdicts: RelPath | None = None
    eval_matrix: RelPath | None = None
    dataset: RelPath | None = None
    expected_flow: RelPath | None = None
    behavior_tree: RelPath | None = None
    annotations: RelPath | None = None
    taxonomy: RelPath | None = None
    judge_runs: list[RelPath] = Field(default_factory=list)
    """Verdicts of earlier judge-prompt iterations, oldest first; ``verdicts`` is the current prompt's."""
    judge: JudgeSettings
    seed: int = 0
    notebooks: list[Slug] = Field(min_length=1)

    @field_validator("notebooks")
    @classmethod
    def _unique(cls, value: list[str]) -> list[str]:
        if len(set(value)) != len(value):
            raise ValueError("notebooks: each notebook may be listed once")
        return value

    def input_paths(self) -> dict[str, str]:
        """The input files this subject names, by field, as written (relative to the subject file)."""
        fields = ("traces", "labels", "verdicts", "eval_matrix", "dataset", "expected_flow", "behavior_tree",
                  "annotations", "taxonomy")
        paths = {f: getattr(self, f) for f in fields if getattr(self, f) is not None}
        paths.update({f"judge_runs[{i}]": run for i, run in enumerate(self.judge_runs)})
        return paths
