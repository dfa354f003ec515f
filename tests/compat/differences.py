"""The differences between berth's and Zun's answers that the differential tests accept,
each with why berth differs (docs/migrating-from-zun.md, "What a client sees
differently", says the same for users). A key is an fnmatch pattern over
``scenario/step/difference``, the difference as ``differ.compare`` words it."""

from __future__ import annotations

from fnmatch import fnmatchcase

HELPFUL = ("berth's error titles say what was wrong and what to do (the developers' guide: "
           "errors say what to do); Zun's repeat jsonschema's message, or nothing. The code, "
           "status and the title's first sentence are Zun's")
EMPTY = ("berth answers an empty object or list where the container has none; Zun answers "
         "null until its compute fills the field in. Both mean 'none'")
NOT_YET = ("Zun fills these in only when zun-compute reports back (null at first, then a "
           "value); berth answers with what it knows at once. To fix in berth (same type "
           "as Zun's) if a client relies on the type")

LISTED: dict[str, str] = {
    "bad_input/*/body.errors[].title: *": HELPFUL,
    "lifecycle/* a * container/body.errors[].title: *": HELPFUL,
    "lifecycle/delete running, no force/body.errors[].title: *": HELPFUL,
    "microversions/list at malformed/body.errors[].title: berth 'Not Acceptable', Zun ''":
        HELPFUL,
    "microversions/list at 1.41 (above max)/*": (
        "Zun 18 answers 500 with a body of null to a version above its maximum (a Zun "
        "defect); berth answers 406 with the error body it gives any unacceptable version"),
    "microversions/list at 1.0 (below min)/*": (
        "Zun 18 answers 500 with a body of null to a version below its minimum (a Zun "
        "defect); berth answers 406 with the error body it gives any unacceptable version"),
    "lifecycle/create run=true/body.addresses: berth {}, Zun 'null'": EMPTY,
    "lifecycle/create run=true/body.environment: berth {}, Zun 'null'": EMPTY,
    "lifecycle/create run=true/body.labels: berth {}, Zun 'null'": EMPTY,
    "lifecycle/create run=true/body.ports: berth [], Zun 'null'": EMPTY,
    "lifecycle/create run=true/body.security_groups: berth [], Zun 'null'": EMPTY,
    "lifecycle/create run=true/body.host: berth 'string', Zun 'null'": (
        "berth places a container before it answers the create, so the answer names the "
        "host; Zun schedules after it answers (host null at first)"),
    "lifecycle/*/body.*disk: berth 'null', Zun 'number'": (
        "Zun reports disk 0 when no disk was asked for (the engine cannot limit it here); "
        "berth reports null. To fix in berth"),
    "lifecycle/*/body.*entrypoint: berth 'null', Zun []": NOT_YET,
    "lifecycle/*/body.*healthcheck: berth 'null', Zun {}": NOT_YET,
    "lifecycle/*/body.*restart_policy: berth 'null', Zun {}": NOT_YET,
    "lifecycle/*/body.*status_detail: berth 'null', Zun 'string'": (
        "Zun fills status_detail in from the engine's state; berth leaves it null rather "
        "than restate the status. To fix in berth if a client shows it"),
    "lifecycle/*/body.*addresses.<uuid>[].ifname: missing in Zun*": (
        "berth adds the interface name and MAC address to each address; extra keys, which "
        "python-zunclient ignores"),
    "lifecycle/*/body.*addresses.<uuid>[].mac_addr: missing in Zun*": (
        "berth adds the interface name and MAC address to each address; extra keys, which "
        "python-zunclient ignores"),
}


def reason(scenario: str, step: str, difference: str) -> str | None:
    """Why berth differs here, or None when the difference is not listed."""
    path = f"{scenario}/{step}/{difference}"
    for pattern, why in LISTED.items():
        if fnmatchcase(path, pattern):
            return why
    return None
