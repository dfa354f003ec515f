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

ZUN_500 = ("Zun 18 answers 500 Internal Server Error (a Zun defect: an exception its API "
           "does not catch); berth refuses the request with a 4xx that says what was wrong")
STRICTER = ("berth refuses what Zun lets through: the request cannot do what it asks "
            "(the developers' guide: bad input gets a clear 4xx)")
CAPSULE_STATE = ("Zun 18's docker capsule driver left this capsule in Error here (its "
                 "sandbox on the node engine), so its members stay Creating; berth's is "
                 "Running. The states a working capsule passes through are the same")

LISTED: dict[str, str] = {
    "*/body.errors[].title: *": HELPFUL,
    "microversions/list at 1.41 (above max)/*": (
        "Zun 18 answers 500 with a body of null to a version above its maximum (a Zun "
        "defect); berth answers 406 with the error body it gives any unacceptable version"),
    "microversions/list at 1.0 (below min)/*": (
        "Zun 18 answers 500 with a body of null to a version below its minimum (a Zun "
        "defect); berth answers 406 with the error body it gives any unacceptable version"),
    # What a container's view holds before its agent has run, and after.
    "*/body*addresses: berth {}, Zun 'null'": EMPTY,
    "*/body*environment: berth {}, Zun 'null'": EMPTY,
    "*/body*labels: berth {}, Zun 'null'": EMPTY,
    "*/body*annotations: berth {}, Zun 'null'": EMPTY,
    "*/body*ports: berth [], Zun 'null'": EMPTY,
    "*/body*security_groups: berth [], Zun 'null'": EMPTY,
    "*/body*host: berth 'string', Zun 'null'": (
        "berth places a container before it answers the create, so the answer names the "
        "host; Zun schedules after it answers (host null at first)"),
    "*/body*disk: berth 'null', Zun 'number'": (
        "Zun reports disk 0 when no disk was asked for (the engine cannot limit it here); "
        "berth reports null. To fix in berth"),
    "*/body*entrypoint: berth 'null', Zun []": NOT_YET,
    "*/body*healthcheck: berth 'null', Zun {}": NOT_YET,
    "*/body*restart_policy: berth 'null', Zun {}": NOT_YET,
    "*/body*status_detail: berth 'null', Zun 'string'": (
        "Zun fills status_detail in from the engine's state; berth leaves it null rather "
        "than restate the status. To fix in berth if a client shows it"),
    "*/body*addresses.<uuid>[].ifname: missing in Zun*": (
        "berth adds the interface name and MAC address to each address; extra keys, which "
        "python-zunclient ignores"),
    "*/body*addresses.<uuid>[].mac_addr: missing in Zun*": (
        "berth adds the interface name and MAC address to each address; extra keys, which "
        "python-zunclient ignores"),
    # Container actions and calls.
    "actions/rename*/body.errors[].code: berth 'container.not-acceptable', Zun 'container.'": (
        "POST .../rename exists only to 1.13; at 1.40 Zun answers 406 with an empty code, "
        "berth with not-acceptable and the PATCH to use instead"),
    "actions/update nothing/*": (
        "Zun answers an empty PATCH with 200 and the unchanged container; berth refuses it "
        "(400 naming the fields an update takes), as it refuses every request that can do "
        "nothing. " + STRICTER),
    "actions/logs with a bad tail/*": (
        "Zun ignores a tail that is not a number or 'all' and returns the whole log; berth "
        "refuses it (400 naming the field). " + STRICTER),
    "actions/stats/*": (
        "Zun 18's stats answered 500 here for a container on its cni network (a Zun "
        "defect); berth answers the stats"),
    "actions/exec without a command/*": ZUN_500,
    "actions/get_archive of a missing path/*": ZUN_500,
    # Capsules.
    "capsules/create without containers/*": ZUN_500,
    "capsules/*/body.*status: berth 'Running', Zun 'Error'": CAPSULE_STATE,
    "capsules/*/body.*containers[].status: berth 'Running', Zun 'Creating'": CAPSULE_STATE,
    "capsules/*/body.*status_reason: berth 'null', Zun 'string'": CAPSULE_STATE,
    "capsules/*/body.*containers[].addresses.<uuid>: missing in Zun*": CAPSULE_STATE,
    "capsules/*/body.*containers[].*: berth 'string', Zun 'null'": (
        "a capsule member's hostname, image_driver, runtime and updated_at: berth fills "
        "them in as it makes the member; Zun's members here never left Creating "
        "(see the capsule's Error above)"),
    "capsules/show after delete/body.errors[].code: berth 'container.capsule-not-found', "
    "Zun 'container.container-not-found'": (
        "Zun answers a missing capsule with the container's not-found code; berth names "
        "the capsule (the status, 404, is the same)"),
    # The cluster's resources.
    "cluster/services/body.services[].updated_at: berth 'null', Zun 'string'": (
        "a service's updated_at is its last heartbeat; the berth of the test started "
        "seconds before and has not beaten yet (Zun's had run for minutes). Null until "
        "the first beat on both"),
    "cluster/image that does not exist/*": (
        "Zun answers an image uuid it does not know with 400 image-not-found; berth with "
        "404 (the resource is not there: the request itself is well formed)"),
}


def reason(scenario: str, step: str, difference: str) -> str | None:
    """Why berth differs here, or None when the difference is not listed."""
    path = f"{scenario}/{step}/{difference}"
    for pattern, why in LISTED.items():
        if fnmatchcase(path, pattern):
            return why
    return None
