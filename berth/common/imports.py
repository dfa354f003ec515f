"""Importing a library's submodules without its package's ``__init__``.

Some libraries' ``__init__`` imports every module they have, to offer each public
name at the top: pyroute2's loads 163 of its modules (NDB and its SQLite schema, IPDB,
psutil, Plan 9, WireGuard, ...) where ``IPRoute`` needs 99. Python runs a package's
``__init__`` before any of its submodules, so ``from pyroute2.iproute import IPRoute``
alone costs the whole package (bench P6: 4.6 MiB of ``berth serve``).

``shallow_package(name)`` registers the package as a module whose ``__path__`` lets its
submodules be imported as usual, without running its ``__init__``. The first read of one
of the package's own top-level names (``pyroute2.IPRoute``, ``from pyroute2 import
NDB``, by berth or any other code in the process) runs the ``__init__`` then, in that
same module, so such code still gets what it expects, at the package's whole cost."""

from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
from collections.abc import Mapping
from types import ModuleType
from typing import Any

_lock = threading.RLock()
#: Packages registered by ``shallow_package`` whose ``__init__`` has not run yet.
_pending: set[str] = set()


def pending(name: str) -> bool:
    """Whether ``sys.modules`` holds the package ``name`` as ``shallow_package``
    registered it, its ``__init__`` not run yet: code that would hide a library from
    another one's import (``berth.rpc.oslo``) may still hide it."""
    return name in _pending and sys.modules.get(name) is not None


def shallow_package(name: str, defined_in: Mapping[str, str] | None = None) -> ModuleType:
    """The package ``name`` as ``sys.modules`` has it, registered first (see the module's
    docstring) when it is not imported yet. ImportError when it is not installed.
    ``defined_in``: top-level names of the package that its own modules or other
    libraries import from it (uvicorn's lifespan modules: ``from uvicorn import
    Config``; requests: ``charset_normalizer.__version__``), each with the module that
    defines it, which is imported for it instead of the whole package."""
    defined_in = dict(defined_in or {})
    with _lock:
        found = sys.modules.get(name)
        if found is not None:
            return found
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None or spec.submodule_search_locations is None:
            raise ImportError(f"{name} is not an installed package", name=name)
        module = importlib.util.module_from_spec(spec)
        loader = spec.loader

        def complete(attr: str) -> Any:
            # PEP 562: called only for a name the module does not have (yet), among
            # them a submodule not imported yet (``from pyroute2 import config`` asks
            # for the attribute first): that is imported, not the whole package.
            if attr in defined_in:
                value = getattr(importlib.import_module(defined_in[attr]), attr)
                setattr(module, attr, value)
                return value
            if attr.startswith("__"):
                raise AttributeError(f"module {name!r} has no attribute {attr!r}")
            if importlib.util.find_spec(f"{name}.{attr}") is not None:
                return importlib.import_module(f"{name}.{attr}")
            with _lock:
                if module.__dict__.pop("__getattr__", None) is not None:
                    _pending.discard(name)
                    loader.exec_module(module)     # the package's own __init__, in place
            try:
                return module.__dict__[attr]
            except KeyError:
                raise AttributeError(f"module {name!r} has no attribute {attr!r}") from None

        module.__getattr__ = complete  # type: ignore[method-assign]
        sys.modules[name] = module
        _pending.add(name)
        return module
