"""Facades whose names load on first use (PEP 562), for packages with parts that are slow to import.

``from evalkit.report import readable`` then costs only the module that defines ``readable``; a package
that wants this keeps its full ``__all__`` (and the imports under ``TYPE_CHECKING`` for editors) and says
where each name lives.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from typing import Any


def load_on_first_use(package: str, homes: Mapping[str, str],
                      public: Iterable[str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module-level ``__getattr__`` and ``__dir__`` of a facade whose names load on first use.

    Args:
        package: the facade's module name (its ``__name__``), for the error on an unknown name.
        homes: each lazily loaded name and the module that defines it.
        public: the facade's ``__all__``, what ``dir()`` lists.

    Returns:
        ``(__getattr__, __dir__)``, to assign at the facade's top level.
    """
    listed = sorted(public)

    def __getattr__(name: str) -> Any:
        if name not in homes:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(homes[name]), name)

    def __dir__() -> list[str]:
        return listed

    return __getattr__, __dir__
