"""Batch runs: execute the subject's notebooks with papermill, then write the report.

A run folder holds ``run.json`` (what was evaluated, with what, and how each notebook went), one
folder per notebook (the executed ``.ipynb``, its ``summary.json`` and a code-free HTML page) and
``index.html``. The same inputs and ``--at`` give byte-identical files, executed notebooks and their
pages included: no wall-clock time, random order or absolute path goes into them (papermill's and
nbclient's timings are taken out, cell ids are fixed, ``output_dir`` is the notebook's own folder).

A run is built in a hidden sibling folder (``.NAME.partial-*``) and swapped in when it ends, so a run
killed at any point (``kill -9``) leaves the previous run folder as it was, never a report beside half of
the next one's notebooks; the next run removes what the killed one left.

A subject's input files are read from the subject file's folder and below: one whose path leads
elsewhere (``..``, an absolute path, a link out) is refused unless the run allows it
(``--allow-outside``), so a subject file cannot make a report of any file on the machine.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from evalkit import __version__
from evalkit.contracts.summary import NotebookRun, RunManifest
from evalkit.errors import InputError
from evalkit.io.atomic import atomic_write_text
from evalkit.io.canonical import canonical_dumps
from evalkit.kernel_files import kernel_connection_file, kernel_runtime_dir
from evalkit.notebook_parameters import notebook_parameters
from evalkit.run_folder import building
from evalkit.subjects import (  # noqa: F401  (the notebooks read subjects through the pipeline)
    ALLOW_OUTSIDE_ENV,
    ResolvedSubject,
    input_digests,
    load_subject,
    outside_allowed,
)

KERNEL_NAME = "python3"
"""papermill runs every notebook in this kernel; jupyter_client starts it with the running Python,
so notebooks see the same evalkit, in the same virtual environment, as the command."""


NOTEBOOKS_PACKAGE_DIR = "notebooks"
"""The notebooks ship inside the package (``evalkit/notebooks/``, package data), so an installed
evalkit runs them from anywhere; the checkout's root ``notebooks`` is a link to the same folder, for
``jupyter lab notebooks/``."""


def write_run_report(run_dir: str | Path) -> Path:
    """Write ``RUN_DIR/index.html`` with the sections of every package that adds one to run reports.

    The report imports no package above it; those with a section of their own register it when they
    are imported (:mod:`evalkit.report.sections`), so this layer, which composes them, imports them first.

    Returns:
        The path of ``index.html``.
    """
    import evalkit.history  # noqa: F401 -- registers the trend section
    import evalkit.skilleval  # noqa: F401 -- registers the skill-eval release report's section
    import evalkit.viewer  # noqa: F401 -- registers the trace viewer's section
    from evalkit.report import write_report

    return write_report(run_dir)


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


TIMINGS = ("start_time", "end_time", "duration")
"""papermill's clock readings, per notebook and per cell: taken out of the executed notebook (the
notebook's start and end are the run's injected time instead), so reruns are byte-identical."""


def _coalesced(outputs: list) -> list:
    """Consecutive outputs of one stream (stdout, stderr) joined into one."""
    merged: list = []
    for output in outputs:
        last = merged[-1] if merged else None
        if (output.get("output_type") == "stream" and last is not None and last.get("output_type") == "stream"
                and last.get("name") == output.get("name")):
            last["text"] = last["text"] + output["text"]
        else:
            merged.append(output)
    return merged


def make_reproducible(executed: Path, source: Path, at: str | None) -> None:
    """Rewrite an executed notebook without what changes from one identical run to the next.

    Cells keep the ids their author gave them; a cell papermill added (the injected parameters, an
    error banner) or one without an id gets one from its tag or position. Clock readings go
    (nbclient's ``execution`` timings, papermill's per-cell times; the notebook's start and end become
    ``at``), and the notebook paths papermill records are file names, not absolute paths. Printed text is
    one output per stream and run of prints: the kernel sends it in chunks as its buffer happens to flush.
    """
    import json

    import nbformat

    authored = {cell.get("id") for cell in json.loads(source.read_text(encoding="utf-8")).get("cells", [])}
    nb = nbformat.read(str(executed), as_version=4)
    used: set[str] = set()
    for i, cell in enumerate(nb.cells):
        tags = cell.get("metadata", {}).get("tags", [])
        added = next((t for t in tags if t == "injected-parameters" or t.startswith("papermill-")), None)
        cell_id = cell.get("id") if added is None and cell.get("id") in authored else f"{added or 'cell'}-{i}"
        cell["id"] = cell_id if cell_id not in used else f"cell-{i}"
        used.add(cell["id"])
        cell.get("metadata", {}).pop("execution", None)
        for key in TIMINGS:
            cell.get("metadata", {}).get("papermill", {}).pop(key, None)
        if "outputs" in cell:
            cell["outputs"] = _coalesced(cell["outputs"])
    meta = nb.metadata.get("papermill")
    if meta is not None:
        meta.pop("duration", None)
        meta.update({key: at for key in ("start_time", "end_time") if key in meta})
        meta.update({key: Path(meta[key]).name for key in ("input_path", "output_path") if meta.get(key)})
    atomic_write_text(executed, nbformat.writes(nb))


def _quiet_shutdown_kernel_manager() -> type:
    """jupyter_client's kernel manager, but one that does not interrupt an idle kernel to shut it down.

    Its connection file goes to the run's own folder (:mod:`evalkit.kernel_files`).

    jupyter_client sends SIGINT before every shutdown request (to stop a cell still running); a finished
    notebook's kernel is idle, and when the signal lands in its event loop ipykernel logs "KeyboardInterrupt
    caught in kernel." on the command's standard error, in the middle of a run that went well. Interrupts
    at other times (nbclient's on a cell's timeout) are sent as before.
    """
    from jupyter_client.manager import AsyncKernelManager

    class QuietShutdownKernelManager(AsyncKernelManager):
        def write_connection_file(self, **kwargs: Any) -> None:
            # jupyter_client's default is a mkstemp file in TMPDIR, left there when the run is killed
            if not self.connection_file:
                self.connection_file = str(kernel_connection_file())
            super().write_connection_file(**kwargs)

        async def _async_interrupt_kernel(self) -> None:
            if self.shutting_down:
                return
            await super()._async_interrupt_kernel()

    return QuietShutdownKernelManager


def run_notebook(notebook: Path, out_dir: Path, parameters: dict[str, object],
                 at: str | None = None) -> NotebookRun:
    """Execute one notebook into ``out_dir`` and render it; never raises for a failing cell.

    The notebook runs in ``out_dir`` (its ``output_dir`` is ``.``); the executed copy is made
    reproducible (:func:`make_reproducible`, ``at`` as its time) before its page is rendered.
    """
    import papermill

    from evalkit.report import NOTEBOOK_HTML, SUMMARY_FILE, notebook_to_html

    name = notebook.stem
    out_dir.mkdir(parents=True, exist_ok=True)
    executed = out_dir / f"{name}.ipynb"
    (out_dir / SUMMARY_FILE).unlink(missing_ok=True)  # a stale summary must not pass for a new one
    try:
        # The kernel's own log level is raised so its "running over TCP" warning does not bury progress.
        papermill.execute_notebook(str(notebook), str(executed), parameters={**parameters, "output_dir": "."},
                                   kernel_name=KERNEL_NAME, cwd=str(out_dir), progress_bar=False,
                                   log_output=False, extra_arguments=["--IPKernelApp.log_level=ERROR"],
                                   kernel_manager_class=_quiet_shutdown_kernel_manager())
        result = NotebookRun(name=name, status="ok")
        if not (out_dir / SUMMARY_FILE).exists():
            result = NotebookRun(name=name, status="failed",
                                 error=f"{name}: finished without writing {SUMMARY_FILE}")
    except Exception as exc:  # papermill raises several types; each becomes a located failure
        result = _failure(name, exc, notebook)
    if executed.exists():
        make_reproducible(executed, notebook, at)
        atomic_write_text(out_dir / NOTEBOOK_HTML, notebook_to_html(executed))
    return result


@contextlib.contextmanager
def _outside_allowed_in_kernels(allow: bool) -> Iterator[None]:
    """Let the notebooks' kernels (started within, inheriting the environment) accept outside paths too."""
    before = os.environ.get(ALLOW_OUTSIDE_ENV)
    if allow:
        os.environ[ALLOW_OUTSIDE_ENV] = "1"
    try:
        yield
    finally:
        if allow:
            if before is None:
                os.environ.pop(ALLOW_OUTSIDE_ENV, None)
            else:
                os.environ[ALLOW_OUTSIDE_ENV] = before


def run_subject(subject_path: str | Path, out_dir: str | Path, *, only: list[str] | None = None,
                at: str | None = None, notebooks_dir: str | Path | None = None,
                allow_outside: bool | None = None, history: str | Path | None = None,
                batch: str | None = None) -> RunManifest:
    """Run a subject's notebooks and write the report.

    Args:
        subject_path: the subject file.
        out_dir: the run folder (created when missing).
        only: run just these notebooks (names as in the subject file).
        at: the run's timestamp, injected (recorded as given; never read from the clock).
        notebooks_dir: where the notebooks are (default: the ones shipped with evalkit).
        allow_outside: accept subject paths outside the subject's folder (see :func:`load_subject`).
        history: the history folder to record the run in (:mod:`evalkit.history`); None records nothing.
        batch: the batch this run is part of, as the history records it.

    Returns:
        The run manifest; notebooks that failed have ``status == "failed"``.

    Raises:
        InputError: a bad subject or notebook parameter (before anything runs), or an ``out_dir``
            that cannot hold the run.
    """
    from evalkit.report import MANIFEST_FILE

    allow = outside_allowed(allow_outside)
    resolved = load_subject(subject_path, allow_outside=allow)
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
        hint = (f"; --notebooks names the folder holding the notebooks, --only {nb_dir.name} runs one of the "
                f"subject's" if nb_dir.name in names and not nb_dir.is_dir() else "")
        raise InputError(f"notebook not found: {', '.join(f'{n}.ipynb' for n in missing)} in {nb_dir}{hint}",
                         path="--notebooks")
    # Every notebook's parameters are checked before the first one runs: a typo fails in a second.
    own = {n: notebook_parameters(resolved.path, subject.parameters.get(n, {}), nb_dir / f"{n}.ipynb")
           for n in names}
    parameters = {"subject_file": str(resolved.path), "run_at": at}
    runs = []
    inputs = [resolved.path, nb_dir, *(resolved.resolve(rel) for rel in subject.input_paths().values())]
    if history is not None:
        inputs.append(Path(history))  # a run replaces its folder whole: the history must live elsewhere
    with building(out_dir, inputs) as out, _outside_allowed_in_kernels(allow), kernel_runtime_dir():
        for i, name in enumerate(names, start=1):
            print(f"[{i}/{len(names)}] {name} ...", end="", file=sys.stderr, flush=True)
            started = time.perf_counter()
            result = run_notebook(nb_dir / f"{name}.ipynb", out / name, {**parameters, **own[name]}, at)
            if name in subject.parameters:
                result = result.model_copy(update={"parameters": subject.parameters[name]})
            runs.append(result)
            took = time.perf_counter() - started
            print(f" {result.status} ({took:.1f}s)" + (f"\n    {result.error}" if result.error else ""),
                  file=sys.stderr, flush=True)
        manifest = RunManifest(subject=subject.name, evalkit_version=__version__, run_at=at, judge=subject.judge,
                               seed=subject.seed, inputs=input_digests(resolved), notebooks=runs)
        atomic_write_text(out / MANIFEST_FILE, canonical_dumps(manifest.model_dump(mode="json")))
        if history is not None:
            from evalkit.history import record_notebook_run

            record_notebook_run(out, history, run_path=out_dir, batch=batch,
                                verdicts_file=resolved.resolve(subject.verdicts))
        from evalkit.viewer import write_trace_view

        write_trace_view(out, resolved)
        write_run_report(out)
    return manifest
