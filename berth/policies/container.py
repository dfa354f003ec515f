"""``container:*``: the containers' own operations, and the fields only admins see."""

from __future__ import annotations

from oslo_policy import policy

from berth.policies.base import ADMIN, ADMIN_OR_OWNER, documented

PREFIX = "container:%s"
ONE = "/v1/containers/{container_ident}"

#: Container actions, each guarded by ``container:<action>`` (admin or owner):
#: ``(action, method, path under ONE, what it does)``.
ACTIONS = (
    ("start", "POST", "/start", "Start a container."),
    ("stop", "POST", "/stop", "Stop a container."),
    ("reboot", "POST", "/reboot", "Restart a container."),
    ("pause", "POST", "/pause", "Pause a container's processes."),
    ("unpause", "POST", "/unpause", "Resume a paused container."),
    ("kill", "POST", "/kill", "Send a signal to a container."),
    ("logs", "GET", "/logs", "Read a container's output."),
    ("execute", "POST", "/execute", "Run a command in a container."),
    ("execute_resize", "POST", "/execute_resize", "Resize an interactive exec's terminal."),
    ("attach", "GET", "/attach", "Get a console URL attached to a container."),
    ("resize", "POST", "/resize", "Resize a container's terminal."),
    ("resize_container", "POST", "/resize_container", "Change a container's CPU or memory."),
    ("top", "GET", "/top", "List a container's processes."),
    ("get_archive", "GET", "/get_archive", "Copy files out of a container."),
    ("put_archive", "POST", "/put_archive", "Copy files into a container."),
    ("stats", "GET", "/stats", "Read a container's resource usage."),
    ("commit", "POST", "/commit", "Save a container as an image."),
    ("rename", "POST", "/rename", "Rename a container."),
    ("rebuild", "POST", "/rebuild", "Recreate a container from its image."),
    ("network_attach", "POST", "/network_attach", "Connect a container to a network."),
    ("network_detach", "POST", "/network_detach", "Disconnect a container from a network."),
    ("add_security_group", "POST", "/add_security_group",
     "Add a security group to a container."),
    ("remove_security_group", "POST", "/remove_security_group",
     "Remove a security group from a container."),
)

#: Fields of the container view that only callers passing ``container:get_one:<field>``
#: see; for the others the key is left out (not null).
HIDDEN_FIELDS = ("host", "image_pull_policy", "privileged", "runtime")

RULES: list[policy.RuleDefault] = [
    documented(PREFIX % "create", ADMIN_OR_OWNER, "Create a container.",
               ("POST", "/v1/containers")),
    documented(PREFIX % "create:runtime", ADMIN,
               "Choose the runtime of a new container.", ("POST", "/v1/containers")),
    documented(PREFIX % "create:privileged", ADMIN,
               "Create a privileged container (any 'privileged' in the body, even false).",
               ("POST", "/v1/containers")),
    documented(PREFIX % "create:requested_destination", ADMIN,
               "Name the host a new container must run on ('host').",
               ("POST", "/v1/containers")),
    documented(PREFIX % "create:image_pull_policy", ADMIN,
               "Set the image pull policy of a new container.", ("POST", "/v1/containers")),
    documented(PREFIX % "get_one", ADMIN_OR_OWNER, "Show a container.", ("GET", ONE)),
    documented(PREFIX % "get_one_all_projects", ADMIN,
               "Show a container of any project (all_projects=true).", ("GET", ONE)),
    documented(PREFIX % "get_all", ADMIN_OR_OWNER, "List containers.",
               ("GET", "/v1/containers")),
    documented(PREFIX % "get_all_all_projects", ADMIN,
               "List every project's containers (all_projects=true).",
               ("GET", "/v1/containers")),
    documented(PREFIX % "update", ADMIN_OR_OWNER, "Update a container.", ("PATCH", ONE)),
    documented(PREFIX % "delete", ADMIN_OR_OWNER, "Delete a container.", ("DELETE", ONE)),
    documented(PREFIX % "delete_force", ADMIN,
               "Delete a container without stopping it first (force=true).",
               ("DELETE", ONE)),
    documented(PREFIX % "delete_all_projects", ADMIN,
               "Delete a container of any project (all_projects=true).", ("DELETE", ONE)),
    *(documented(PREFIX % f"get_one:{field}", ADMIN,
                 f"See the '{field}' field of containers (hidden from others).",
                 ("GET", ONE), ("GET", "/v1/containers"))
      for field in HIDDEN_FIELDS),
    *(documented(PREFIX % action, ADMIN_OR_OWNER, text, (method, ONE + path))
      for action, method, path, text in ACTIONS),
]


def list_rules() -> list[policy.RuleDefault]:
    return list(RULES)
