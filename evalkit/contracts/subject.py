"""The subject file: what the pipeline evaluates, where its files are, and how the judge is pinned.

Paths are relative to the subject file. The judge, when the subject has one, is pinned to one model at
temperature 0 so reruns are comparable (and, with a cache, byte-identical). ``parameters`` sets a
notebook's own parameters by name; the pipeline checks each name against that notebook's parameters
cell, and resolves a value whose name ends in ``_file`` or ``_path`` against the subject file's folder.
"""

from __future__ import annotations

import string
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator, model_validator

from evalkit.contracts.base import SchemaNamed, SnakeContract
from evalkit.contracts.types import LowerName, NonEmptyStr

RelPath = NonEmptyStr
ParameterName = Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")]
"""A notebook parameter is a Python variable of the notebook's parameters cell."""
PATH_PARAMETER_SUFFIXES = ("_file", "_path")
"""A parameter whose name ends so is a path, written relative to the subject file like its inputs; a
``_file`` must exist and is recorded (with its digest) among the run's inputs, a ``_path`` need not."""
PIPELINE_PARAMETERS = ("subject_file", "output_dir", "run_at")
"""Set by the pipeline for every notebook; a subject cannot set them."""


class JudgeSettings(SnakeContract):
    """The judge every criterion runs under: provider, pinned model id, temperature 0."""

    provider: NonEmptyStr
    model: NonEmptyStr
    temperature: float = Field(default=0, ge=0, le=0, description="pinned to 0 for reproducible verdicts")


AGENT_PLACEHOLDERS = ("case", "out", "repeat", "case_id", "python")
"""What an agent command's arguments may name in braces: the case file, the trace file to write, the
repeat number, the case id, and the Python interpreter running evalkit."""
EnvName = Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")]


def check_placeholders(argv: list[str], field: str, known: tuple[str, ...],
                       required: tuple[str, ...]) -> list[str]:
    """An argv whose ``{name}`` placeholders are all known and name every required one (else ValueError)."""
    named: set[str] = set()
    for i, arg in enumerate(argv):
        try:
            fields = [f for _, f, _, _ in string.Formatter().parse(arg) if f is not None]
        except ValueError as exc:
            raise ValueError(f"{field}[{i}]: {exc} (write a literal brace as {{{{ or }}}})") from None
        unknown = [f for f in fields if f not in known]
        if unknown:
            raise ValueError(f"{field}[{i}]: unknown placeholder {{{unknown[0]}}}; "
                             f"known: {', '.join('{' + p + '}' for p in known)}")
        named.update(fields)
    missing = [p for p in required if p not in named]
    if missing:
        raise ValueError(f"{field}: must name {' and '.join('{' + p + '}' for p in missing)}")
    return argv


class AgentCommand(SnakeContract):
    """How to run the agent on one case: an argv (no shell) that reads ``{case}`` and writes a trace to ``{out}``."""

    command: list[NonEmptyStr] = Field(min_length=1)
    timeout_s: float = Field(default=60, gt=0)
    env: list[EnvName] = Field(default_factory=list)
    """Names of environment variables passed through to the agent; every other variable is scrubbed."""

    @field_validator("command")
    @classmethod
    def _needs_case_and_out(cls, value: list[str]) -> list[str]:
        return check_placeholders(value, "command", AGENT_PLACEHOLDERS, required=("case", "out"))


REMEDY_PLACEHOLDERS = ("request", "response", "swing", "python")
"""What a remedy command's arguments may name in braces: the change-request file to read, the response file
to write, the swing number, and the Python interpreter running evalkit."""


class EddSettings(SnakeContract):
    """How the eval-driven-development loop asks for amendments (``evalkit edd run``; docs/edd.md)."""

    remedy_command: list[NonEmptyStr] = Field(min_length=1)
    """An argv (no shell) that reads the change request at ``{request}`` and writes its reply to ``{response}``."""
    timeout_s: float = Field(default=600, gt=0)
    remedy_target: Literal["agentspec", "impl"] = "agentspec"
    """Where the change requests ask for the fix: the agent's definition or its implementation."""
    variance_repeats: int = Field(default=5, ge=2, strict=True)
    """Repeats per case in a variance swing (the seed's variance gate: N=5, max variance 0)."""

    @field_validator("remedy_command")
    @classmethod
    def _needs_request_and_response(cls, value: list[str]) -> list[str]:
        return check_placeholders(value, "remedy_command", REMEDY_PLACEHOLDERS, required=("request", "response"))


class Subject(SnakeContract, SchemaNamed):
    """One agent under evaluation and the inputs the notebooks read."""

    name: LowerName
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
    judges: list[RelPath] = Field(default_factory=list)
    """Judge spec files (kind ``judge-spec``, YAML): the LLM judges this subject's criteria run under."""
    judge: JudgeSettings | None = None
    """Only notebooks that run or calibrate a judge need it."""
    agent: AgentCommand | None = None
    """The agent as a command evalkit can run on the dataset's cases (``evalkit eval run``)."""
    edd: EddSettings | None = None
    """The remedy command the eval-driven-development loop hands its change requests to (``evalkit edd run``)."""
    seed: int = 0
    notebooks: list[LowerName] = Field(min_length=1)
    parameters: dict[LowerName, dict[ParameterName, Any]] = Field(default_factory=dict)
    """Per notebook (by name), values for the notebook's own parameters: ``{01_error_analysis: {by: channel}}``."""

    @field_validator("notebooks")
    @classmethod
    def _unique(cls, value: list[str]) -> list[str]:
        if len(set(value)) != len(value):
            raise ValueError("notebooks: each notebook may be listed once")
        return value

    @model_validator(mode="after")
    def _parameters_are_settable(self) -> Subject:
        stray = [name for name in self.parameters if name not in self.notebooks]
        if stray:
            raise ValueError(f"parameters: {', '.join(stray)} is not among the subject's notebooks "
                             f"({', '.join(self.notebooks)})")
        for notebook, values in self.parameters.items():
            for name, value in values.items():
                if name in PIPELINE_PARAMETERS:
                    raise ValueError(f"parameters.{notebook}.{name}: set by the pipeline, not the subject")
                if name.endswith(PATH_PARAMETER_SUFFIXES) and not (value is None or isinstance(value, str)):
                    raise ValueError(f"parameters.{notebook}.{name}: a path (relative to the subject file) "
                                     f"must be a string, got {type(value).__name__}")
        return self

    def path_parameters(self, suffixes: tuple[str, ...] = PATH_PARAMETER_SUFFIXES) -> dict[str, str]:
        """The path-valued notebook parameters, by ``parameters.NOTEBOOK.NAME``, as written."""
        return {f"parameters.{nb}.{name}": value
                for nb, values in self.parameters.items() for name, value in values.items()
                if name.endswith(suffixes) and value is not None}

    def input_paths(self) -> dict[str, str]:
        """The input files this subject names, by field, as written (relative to the subject file)."""
        fields = ("traces", "labels", "verdicts", "eval_matrix", "dataset", "expected_flow", "behavior_tree",
                  "annotations", "taxonomy")
        paths = {f: getattr(self, f) for f in fields if getattr(self, f) is not None}
        paths.update({f"judge_runs[{i}]": run for i, run in enumerate(self.judge_runs)})
        paths.update({f"judges[{i}]": spec for i, spec in enumerate(self.judges)})
        paths.update(self.path_parameters(("_file",)))
        return paths
