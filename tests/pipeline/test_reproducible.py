"""An executed notebook keeps nothing that differs between two identical runs: here, how prints were chunked."""

from __future__ import annotations

import json

import nbformat

from evalkit.pipeline import make_reproducible


def test_prints_split_by_the_kernel_s_flushes_are_one_output_per_stream(tmp_path):
    source = tmp_path / "source.ipynb"
    cell = nbformat.v4.new_code_cell("print('a'); print('b')", id="c1")
    nbformat.write(nbformat.v4.new_notebook(cells=[cell]), source)
    executed = tmp_path / "executed.ipynb"
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="The traces name no case."),
                    nbformat.v4.new_output("stream", name="stdout", text="\n"),
                    nbformat.v4.new_output("stream", name="stderr", text="warning\n"),
                    nbformat.v4.new_output("stream", name="stdout", text="after\n")]
    nbformat.write(nbformat.v4.new_notebook(cells=[cell]), executed)
    make_reproducible(executed, source, "2026-12-01T00:00:00Z")
    outputs = json.loads(executed.read_text())["cells"][0]["outputs"]
    assert [(o["name"], "".join(o["text"])) for o in outputs] == [
        ("stdout", "The traces name no case.\n"), ("stderr", "warning\n"), ("stdout", "after\n")]
