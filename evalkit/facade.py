"""Facades whose names load on first use (PEP 562), for packages with parts that are slow to import.

``from evalkit.report import readable`` then costs only the module that defines ``readable``. A package that
wants this writes its imports under ``if TYPE_CHECKING:`` (what editors and type checkers read) and its
``__all__``, and ends with ``__getattr__, __dir__ = load_on_first_use(__name__, __all__)``. The imports are
the one list of where each name lives: this module reads them from the facade's source. ruff refuses an
import missing from ``__all__`` (F401), and a name in ``__all__`` that no import names is refused here.
"""

from __future__ import annotations

import ast
import importlib
import sys
import types
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

_SAME_NAMED: dict[str, frozenset[str]] = {}
"""Per facade, the names it offers that are also the names of the modules defining them."""


class _Facade(types.ModuleType):
    """A facade module that keeps offering a name when the submodule of the same name loads.

    Loading ``evalkit.analysis.transcript`` sets the package's ``transcript`` attribute to that module,
    and ``from evalkit.analysis import transcript`` would then give the module instead of the function.
    A facade that imported its names eagerly rebound them after its submodules loaded; this one rebinds
    each as its module loads, whoever loads it first.
    """

    def __setattr__(self, name: str, value: Any) -> None:
        if (isinstance(value, types.ModuleType) and name in _SAME_NAMED.get(self.__name__, ())
                and value.__name__ == f"{self.__name__}.{name}" and hasattr(value, name)):
            value = getattr(value, name)
        super().__setattr__(name, value)


def _homes(facade_file: str) -> dict[str, str]:
    """Each name the facade's ``if TYPE_CHECKING:`` block imports, and its home: ``module`` or, for
    ``from module import other as name``, ``module:other``."""
    homes: dict[str, str] = {}
    for node in ast.parse(Path(facade_file).read_text(encoding="utf-8")).body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for imp in node.body:
                if isinstance(imp, ast.ImportFrom) and imp.module and not imp.level:
                    for alias in imp.names:
                        name = alias.asname or alias.name
                        homes[name] = imp.module if name == alias.name else f"{imp.module}:{alias.name}"
    return homes


def load_on_first_use(package: str, public: Iterable[str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module-level ``__getattr__`` and ``__dir__`` of a facade whose names load on first use.

    Args:
        package: the facade's module name (its ``__name__``); the facade must be in ``sys.modules``.
        public: the facade's ``__all__``, what ``dir()`` lists.

    Returns:
        ``(__getattr__, __dir__)``, to assign at the facade's top level.

    Raises:
        RuntimeError: a name in ``__all__`` is neither imported under ``TYPE_CHECKING`` nor defined yet.
    """
    facade = sys.modules[package]
    homes = _homes(facade.__file__)
    listed = sorted(public)
    unknown = [n for n in listed if n not in homes and n not in vars(facade)]
    if unknown:
        raise RuntimeError(f"{package}.__all__ names {unknown}, which its TYPE_CHECKING imports do not")
    facade._HOMES = homes  # where each lazy name lives, for tests and tools
    same_named = frozenset(name for name, home in homes.items() if home == f"{package}.{name}")
    if same_named:
        _SAME_NAMED[package] = same_named
        facade.__class__ = _Facade

    def __getattr__(name: str) -> Any:
        if name not in homes:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, _, attribute = homes[name].partition(":")
        return getattr(importlib.import_module(module), attribute or name)

    def __dir__() -> list[str]:
        return listed

    return __getattr__, __dir__
