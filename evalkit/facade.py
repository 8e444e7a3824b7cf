"""Facades whose names load on first use (PEP 562), for packages with parts that are slow to import.

``from evalkit.report import readable`` then costs only the module that defines ``readable``; a package
that wants this keeps its full ``__all__`` (and the imports under ``TYPE_CHECKING`` for editors) and says
where each name lives.
"""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Callable, Iterable, Mapping
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


def load_on_first_use(package: str, homes: Mapping[str, str],
                      public: Iterable[str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module-level ``__getattr__`` and ``__dir__`` of a facade whose names load on first use.

    Args:
        package: the facade's module name (its ``__name__``), for the error on an unknown name.
        homes: each lazily loaded name and the module that defines it; ``"module:other"`` when the
            facade offers the module's ``other`` under this name.
        public: the facade's ``__all__``, what ``dir()`` lists.

    Returns:
        ``(__getattr__, __dir__)``, to assign at the facade's top level.
    """
    listed = sorted(public)
    same_named = frozenset(name for name, home in homes.items() if home == f"{package}.{name}")
    facade = sys.modules.get(package)
    if same_named and facade is not None:
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
