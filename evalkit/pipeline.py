"""Batch runs: execute the subject's notebooks with papermill, then write the report.

A run folder holds ``run.json`` (what was evaluated, with what, and how each notebook went), one
folder per notebook (the executed ``.ipynb``, its ``summary.json`` and a code-free HTML page) and
``index.html``. The same inputs and ``--at`` give byte-identical ``summary.json`` files and
``index.html``: no wall-clock time, random order or absolute path goes into them.
"""

from __future__ import annotations

import hashlib
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from evalkit import __version__
from evalkit.contracts.subject import Subject
from evalkit.contracts.summary import InputDigest, NotebookRun, RunManifest
from evalkit.errors import InputError
from evalkit.io.atomic import atomic_write_text
from evalkit.io.canonical import canonical_dumps
from evalkit.notebook_parameters import notebook_parameters

KERNEL_NAME = "python3"
"""papermill runs every notebook in this kernel; jupyter_client starts it with the running Python,
so notebooks see the same evalkit, in the same virtual environment, as the command."""


NOTEBOOKS_PACKAGE_DIR = "notebooks"
"""The notebooks ship inside the package (``evalkit/notebooks/``, package data), so an installed
evalkit runs them from anywhere; the checkout's root ``notebooks`` is a link to the same folder, for
``jupyter lab notebooks/``."""


def default_notebooks_dir() -> Path:
    """The notebooks shipped with the installed evalkit package (read through ``importlib.resources``).

    Raises:
        InputError: evalkit is imported from somewhere that is not a folder (a zip file), where
            papermill cannot open the notebooks; ``--notebooks`` names a folder then.
    """
    from importlib.resources import files

    folder = files("evalkit") / NOTEBOOKS_PACKAGE_DIR
    if not isinstance(folder, Path) or not folder.is_dir():
        raise InputError(f"evalkit's notebooks are not a folder on disk ({folder}); "
                         "name one with --notebooks")
    return folder


@dataclass(frozen=True)
class ResolvedSubject:
    """A subject file read and validated, with its inputs resolved against the file's folder."""

    subject: Subject
    path: Path

    @property
    def base(self) -> Path:
        return self.path.parent

    def resolve(self, relative: str | None) -> Path | None:
        """An input's path on this machine (None when the subject does not name it)."""
        return None if relative is None else (self.base / relative).resolve()


def load_subject(path: str | Path) -> ResolvedSubject:
    """Read a subject file and check that every input it names exists.

    Raises:
        InputError: invalid subject file, or an input file that is missing (named by its field).
    """
    from evalkit.contract_files import read_model

    p = Path(path)
    resolved = ResolvedSubject(read_model(p, Subject), p.resolve())
    for field, rel in resolved.subject.input_paths().items():
        if not (resolved.base / rel).is_file():
            raise InputError(f"input file not found: {rel}", file=str(path), path=field)
    return resolved


def input_digests(resolved: ResolvedSubject) -> list[InputDigest]:
    """SHA-256 and size of every input, named as the subject file names it."""
    digests = []
    for field, rel in resolved.subject.input_paths().items():
        data = (resolved.base / rel).read_bytes()
        digests.append(InputDigest(field=field, path=rel, sha256=hashlib.sha256(data).hexdigest(),
                                   bytes=len(data)))
    return digests


FIRST_LINE_CHARS = 60
"""A failing cell is named by its number and its first line, cut to this many characters."""


def _source_cell(notebook: Path, exc: Exception) -> int | None:
    """The failing cell's index in the notebook as written, found by its source text.

    papermill counts the ``injected-parameters`` cell it inserts (after the parameters cell, or at
    the top when there is none), so its index can be one past the author's; the source text is the
    same, and the author's cell is the one with that text nearest the reported index.
    """
    import nbformat

    cells = nbformat.read(str(notebook), as_version=4).cells
    same = [i for i, cell in enumerate(cells) if cell.source == exc.source]
    return min(same, key=lambda i: (abs(exc.cell_index - 1 - i), i)) if same else None


def _failure(name: str, exc: Exception, notebook: Path) -> NotebookRun:
    """A failed notebook, naming the cell as its author sees it (number and first line) and the error."""
    from papermill.exceptions import PapermillExecutionError

    if isinstance(exc, PapermillExecutionError):
        index = _source_cell(notebook, exc)
        if index is None:
            return NotebookRun(name=name, status="failed",
                               error=f"{name}: the injected parameters raised {exc.ename}: {exc.evalue}")
        first = next((line.strip() for line in exc.source.splitlines() if line.strip()), "")
        first = first if len(first) <= FIRST_LINE_CHARS else first[:FIRST_LINE_CHARS - 1] + "\u2026"
        return NotebookRun(name=name, status="failed", cell=index,
                           error=f"{name}: cell {index + 1} ({first}) raised {exc.ename}: {exc.evalue}")
    return NotebookRun(name=name, status="failed", error=f"{name}: {type(exc).__name__}: {exc}")


def run_notebook(notebook: Path, out_dir: Path, parameters: dict[str, object]) -> NotebookRun:
    """Execute one notebook into ``out_dir`` and render it; never raises for a failing cell."""
    import papermill

    from evalkit.report import NOTEBOOK_HTML, SUMMARY_FILE, notebook_to_html

    name = notebook.stem
    out_dir.mkdir(parents=True, exist_ok=True)
    executed = out_dir / f"{name}.ipynb"
    (out_dir / SUMMARY_FILE).unlink(missing_ok=True)  # a stale summary must not pass for a new one
    try:
        # The kernel's own log level is raised so its "running over TCP" warning does not bury progress.
        papermill.execute_notebook(str(notebook), str(executed), parameters=parameters,
                                   kernel_name=KERNEL_NAME, cwd=str(out_dir), progress_bar=False,
                                   log_output=False, extra_arguments=["--IPKernelApp.log_level=ERROR"])
        result = NotebookRun(name=name, status="ok")
        if not (out_dir / SUMMARY_FILE).exists():
            result = NotebookRun(name=name, status="failed",
                                 error=f"{name}: finished without writing {SUMMARY_FILE}")
    except Exception as exc:  # papermill raises several types; each becomes a located failure
        result = _failure(name, exc, notebook)
    if executed.exists():
        atomic_write_text(out_dir / NOTEBOOK_HTML, notebook_to_html(executed))
    return result


def run_subject(subject_path: str | Path, out_dir: str | Path, *, only: list[str] | None = None,
                at: str | None = None, notebooks_dir: str | Path | None = None) -> RunManifest:
    """Run a subject's notebooks and write the report.

    Args:
        subject_path: the subject file.
        out_dir: the run folder (created when missing).
        only: run just these notebooks (names as in the subject file).
        at: the run's timestamp, injected (recorded as given; never read from the clock).
        notebooks_dir: where the notebooks are (default: the ones shipped with evalkit).

    Returns:
        The run manifest; notebooks that failed have ``status == "failed"``.
    """
    from evalkit.report import MANIFEST_FILE, write_report

    resolved = load_subject(subject_path)
    subject = resolved.subject
    names = list(subject.notebooks)
    if only:
        unknown = [n for n in only if n not in names]
        if unknown:
            raise InputError(f"not in the subject's notebooks: {', '.join(unknown)} "
                             f"(one of: {', '.join(names)})", file=str(subject_path), path="notebooks")
        names = [n for n in names if n in only]
    nb_dir = Path(notebooks_dir) if notebooks_dir else default_notebooks_dir()
    missing = [n for n in names if not (nb_dir / f"{n}.ipynb").is_file()]
    if missing:
        raise InputError(f"notebook not found: {', '.join(f'{n}.ipynb' for n in missing)} in {nb_dir}")
    # Every notebook's parameters are checked before the first one runs: a typo fails in a second.
    own = {n: notebook_parameters(resolved.path, subject.parameters.get(n, {}), nb_dir / f"{n}.ipynb")
           for n in names}
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    parameters = {"subject_file": str(resolved.path), "run_at": at}
    runs = []
    for i, name in enumerate(names, start=1):
        print(f"[{i}/{len(names)}] {name} ...", end="", file=sys.stderr, flush=True)
        started = time.perf_counter()
        result = run_notebook(nb_dir / f"{name}.ipynb", out / name,
                              {**parameters, **own[name], "output_dir": str((out / name).resolve())})
        if name in subject.parameters:
            result = result.model_copy(update={"parameters": subject.parameters[name]})
        runs.append(result)
        took = time.perf_counter() - started
        print(f" {result.status} ({took:.1f}s)" + (f"\n    {result.error}" if result.error else ""),
              file=sys.stderr, flush=True)
    manifest = RunManifest(subject=subject.name, evalkit_version=__version__, run_at=at, judge=subject.judge,
                           seed=subject.seed, inputs=input_digests(resolved), notebooks=runs)
    atomic_write_text(out / MANIFEST_FILE, canonical_dumps(manifest.model_dump(mode="json")))
    write_report(out)
    return manifest
