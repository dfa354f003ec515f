"""What loading oslo.messaging (berth/rpc/oslo.py) leaves out of a process: kombu's
YAML and msgpack serializers, also when ``berth.cmd`` registered PyYAML without
running its ``__init__`` (berth.common.imports). In a fresh interpreter each."""

from __future__ import annotations

import subprocess
import sys
import textwrap

#: Whether kombu's registry decodes YAML, or holds its stand-in that refuses it.
READS_YAML = """
def reads_yaml(registry):
    from kombu.exceptions import SerializerNotInstalled
    try:
        return registry._decoders["application/x-yaml"]("a: 1") == {"a": 1}
    except SerializerNotInstalled:
        return False
"""


def run(script: str) -> str:
    return subprocess.run([sys.executable, "-c", READS_YAML + textwrap.dedent(script)],
                          capture_output=True, text=True, check=True, timeout=120).stdout


def test_kombu_registers_neither_yaml_nor_msgpack_and_yaml_stays_unloaded() -> None:
    out = run("""
        import sys
        import berth.cmd                      # registers yaml shallow
        from berth.common import imports
        from berth.rpc import oslo
        oslo._import_messaging()
        from kombu.serialization import registry
        print("pending:", imports.pending("yaml"))
        print("yaml.error:", "yaml.error" in sys.modules, "msgpack:", "msgpack" in sys.modules)
        print("kombu reads yaml:", reads_yaml(registry))
        import yaml
        print("yaml works:", yaml.safe_load("a: 1") == {"a": 1}, imports.pending("yaml"))
    """)
    assert "pending: True" in out
    assert "yaml.error: False msgpack: False" in out
    assert "kombu reads yaml: False" in out
    assert "yaml works: True False" in out


def test_a_yaml_already_loaded_is_left_to_kombu() -> None:
    out = run("""
        import yaml
        from berth.rpc import oslo
        oslo._import_messaging()
        from kombu.serialization import registry
        print("kombu reads yaml:", reads_yaml(registry))
    """)
    assert "kombu reads yaml: True" in out
