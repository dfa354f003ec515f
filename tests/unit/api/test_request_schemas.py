"""Unit tests for berth.api.schemas.validation: every declaration the API reads is a
valid JSON Schema that fastjsonschema compiles (checked here, no longer at each start),
the fast validator is compiled at start but for a capsule's declarations (on their
first check), and ``jsonschema`` is imported only when a body is refused."""

from __future__ import annotations

import gc
import subprocess
import sys
import textwrap
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from berth.api.app import create_app
from berth.api.schemas import capsule, container
from berth.api.schemas.container import CreateLimits
from berth.api.schemas.validation import RequestSchema
from berth.api.state import ApiSettings, ApiState

#: Declarations every build of the API makes (``what``), at the least.
EXPECTED = {"container create", "container update", "capsule create", "image pull",
            "network", "network attach", "network detach", "quota", "registry",
            "registry update"}


def declared(monkeypatch: pytest.MonkeyPatch) -> list[RequestSchema]:
    """Every RequestSchema alive once the app and its document are built: those its
    modules declare, and those its routes build from the settings."""
    made: list[RequestSchema] = []
    original = RequestSchema.__init__

    def recording(self: RequestSchema, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        made.append(self)

    monkeypatch.setattr(RequestSchema, "__init__", recording)
    state = ApiState(db=None, compute=None, scheduler=None,  # type: ignore[arg-type]
                     settings=ApiSettings(create_limits=CreateLimits()),
                     up_hosts=object())  # type: ignore[arg-type]
    create_app(state).openapi()
    live = [o for o in gc.get_objects() if isinstance(o, RequestSchema)]
    return list({id(s): s for s in made + live}.values())


def test_every_declaration_is_a_valid_json_schema(monkeypatch: pytest.MonkeyPatch) -> None:
    schemas = declared(monkeypatch)
    assert EXPECTED <= {s.what for s in schemas}
    for schema in schemas:
        Draft202012Validator.check_schema(schema.schema)
        assert callable(schema._accepts)    # fastjsonschema compiles it too


def test_a_declaration_is_compiled_at_once_or_on_its_first_check() -> None:
    declaration: dict[str, Any] = {"type": "object", "properties": {"n": {"type": "integer"}}}
    eager = RequestSchema(declaration, what="eager", shape="")
    assert "_accepts" in eager.__dict__
    late = RequestSchema(declaration, what="late", shape="", eager=False)
    assert "_accepts" not in late.__dict__
    assert late.check({"n": 1}) == {"n": 1}
    compiled = late.__dict__["_accepts"]
    assert late.check({"n": 2}) == {"n": 2}
    assert late.__dict__["_accepts"] is compiled    # once


def test_a_capsules_declarations_wait_for_a_capsule() -> None:
    limits = CreateLimits(max_cpu=3.0)     # not the other tests' limits: built anew here
    assert "_accepts" not in capsule.create_schema(limits).__dict__
    assert "_accepts" not in capsule.template_schema(limits).__dict__
    assert "_accepts" in container.create_schema(limits).__dict__


def test_jsonschema_is_imported_on_the_first_refusal_only() -> None:
    script = textwrap.dedent("""
        import sys
        from berth.api.schemas.resources import REGISTRY_CREATE
        from berth.common.exceptions import SchemaValidationError
        REGISTRY_CREATE.check({"domain": "127.0.0.1:5000", "username": "u"})
        print("after a good body:", any(m.split(".")[0] == "jsonschema" for m in sys.modules))
        try:
            REGISTRY_CREATE.check({"domain": 5})
        except SchemaValidationError as err:
            print("refused:", err)
        print("after a refusal:", "jsonschema" in sys.modules)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True, timeout=120).stdout
    assert "after a good body: False" in out
    assert "refused: Invalid input for field 'domain'. Value: '5'. A registry host" in out
    assert "after a refusal: True" in out
