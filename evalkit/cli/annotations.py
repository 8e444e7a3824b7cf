"""Reading the annotation store and the taxonomy named on the command line, for ``analysis`` and ``review``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from evalkit.cli.words import plural
from evalkit.errors import InputError

if TYPE_CHECKING:
    from evalkit.analysis import StoreContents
    from evalkit.contracts.annotation import Taxonomy


def read_annotations(path: str, *, need_some: bool = False) -> StoreContents:
    """The store's records (with their lines); a final line cut off by an interrupted write is reported.

    Args:
        path: the annotation store.
        need_some: a store with no annotation is an error (an analysis of it would print zeros and exit 0).

    Raises:
        InputError: the store does not exist, or a line of it is not a valid annotation (or, with
            ``need_some``, there is none).
    """
    from evalkit.analysis import read_store
    from evalkit.io.empty_inputs import refuse_empty

    if not Path(path).exists():
        raise InputError("annotation store not found", file=path)
    contents = read_store(path)
    if contents.torn:
        lines = ", ".join(str(n) for n in contents.torn_lines)
        print(f"warning: {path}: skipped {plural(contents.torn, 'line')} cut short by an interrupted write "
              f"(line {lines})", file=sys.stderr)
    if need_some:
        refuse_empty(len(contents.annotations), file=path, what="annotations",
                     next_step="label traces first (evalkit review build, then evalkit labels import)")
    return contents


def read_taxonomy_option(path: str | None) -> Taxonomy | None:
    """The taxonomy ``--taxonomy`` names, or None when it is not given."""
    from evalkit.analysis import read_taxonomy

    return read_taxonomy(path) if path else None

