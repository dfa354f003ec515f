"""berth.common.imports.shallow_package: a package's submodules without its __init__,
on a package written for the test (each module records that it ran) and, in a new
interpreter, on the two libraries berth uses it for."""

from __future__ import annotations

import importlib
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from berth.common.imports import shallow_package

PACKAGE = "berth_test_shallow_pkg"


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """A package whose __init__ imports all of it, as pyroute2's does; yields the list
    of the modules that ran, in order."""
    root = tmp_path / PACKAGE
    (root / "sub").mkdir(parents=True)
    ran: list[str] = []
    files = {
        "__init__.py": f"""
            import {PACKAGE}.heavy
            from {PACKAGE}.light import Light
            from {PACKAGE}.sub.inner import Inner
            TOP = "top"
        """,
        "heavy.py": "",
        "light.py": "class Light: pass",
        "sub/__init__.py": "",
        "sub/inner.py": f"from {PACKAGE} import light\nclass Inner: pass",
    }
    for rel, body in files.items():
        name = rel.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
        dotted = PACKAGE if name == "__init__" else f"{PACKAGE}.{name}"
        (root / rel).write_text(f"import builtins\nbuiltins._shallow_ran.append({dotted!r})\n"
                                + textwrap.dedent(body))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr("builtins._shallow_ran", ran, raising=False)
    yield ran
    for mod in [m for m in sys.modules if m == PACKAGE or m.startswith(PACKAGE + ".")]:
        del sys.modules[mod]


def test_a_submodule_is_imported_without_the_package_init(package: list[str]) -> None:
    shallow_package(PACKAGE)
    from berth_test_shallow_pkg.sub.inner import Inner  # type: ignore[import-not-found]

    assert Inner.__name__ == "Inner"
    # inner's own "from pkg import light" imported that submodule, not the package
    assert package == [f"{PACKAGE}.sub", f"{PACKAGE}.sub.inner", f"{PACKAGE}.light"]


def test_a_top_level_name_runs_the_init_in_the_same_module(package: list[str]) -> None:
    module = shallow_package(PACKAGE)
    light = importlib.import_module(f"{PACKAGE}.light")     # before the __init__ runs
    assert PACKAGE not in package

    from berth_test_shallow_pkg import TOP  # type: ignore[import-not-found]

    Light = light.Light
    assert TOP == "top"
    assert sys.modules[PACKAGE] is module
    assert module.Light is Light      # the submodule already imported is not run again
    assert package.count(PACKAGE) == 1 and package.count(f"{PACKAGE}.light") == 1
    assert f"{PACKAGE}.heavy" in package
    with pytest.raises(AttributeError, match="no attribute 'missing'"):
        _ = module.missing


def test_a_name_defined_elsewhere_is_taken_from_its_module(package: list[str]) -> None:
    module = shallow_package(PACKAGE, {"Light": f"{PACKAGE}.light"})
    from berth_test_shallow_pkg import Light  # type: ignore[import-not-found]

    assert Light is sys.modules[f"{PACKAGE}.light"].Light
    assert module.Light is Light
    assert PACKAGE not in package      # the __init__ did not run


def test_an_imported_package_is_left_as_it_is(package: list[str]) -> None:
    import berth_test_shallow_pkg  # type: ignore[import-not-found]

    assert shallow_package(PACKAGE) is berth_test_shallow_pkg
    assert package[0] == PACKAGE and package.count(PACKAGE) == 1


def test_not_a_package(package: list[str], tmp_path: Path) -> None:
    with pytest.raises(ImportError):
        shallow_package("berth_no_such_package_here")
    (tmp_path / "berth_test_shallow_plain.py").write_text("")
    with pytest.raises(ImportError, match="not an installed package"):
        shallow_package("berth_test_shallow_plain")     # a module, not a package
    assert "berth_test_shallow_plain" not in sys.modules


@pytest.mark.parametrize(("module", "absent"), [
    # pyroute2's __init__ imports NDB (with SQLite), IPDB, psutil's users, ...; its
    # netlink socket imports unittest.mock, not unittest's test runner
    ("berth.network.bridge", ["pyroute2.ndb", "pyroute2.ipdb", "psutil", "sqlite3",
                              "unittest.case", "unittest.main"]),
    # uvicorn's imports its command line
    ("berth.api.server", ["uvicorn.main", "click"]),
])
def test_berth_loads_only_the_parts_it_uses(module: str, absent: list[str]) -> None:
    code = (f"import sys, {module}\n"
            f"print(' '.join(m for m in {absent!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60)
    assert out.stdout.strip() == ""


def test_requests_guesses_an_encoding_with_the_whole_charset_normalizer() -> None:
    """berth's commands register charset_normalizer shallow: requests imports it (and
    reads its __version__) without its modules, and loads them the first time it
    guesses a body's encoding."""
    code = textwrap.dedent("""
        import sys, warnings
        warnings.simplefilter("error")      # requests warns of a version it cannot read
        import berth.cmd, requests
        before = "charset_normalizer.api" in sys.modules
        r = requests.models.Response()
        r._content, r.encoding = "Grüße aus Zürich, schöne Tage".encode("utf-8"), None
        print(before, r.apparent_encoding, "charset_normalizer.api" in sys.modules)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60)
    assert out.stdout.split() == ["False", "utf-8", "True"]
