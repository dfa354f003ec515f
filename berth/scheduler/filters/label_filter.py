from berth.scheduler.base import HostState, RequestSpec

PREFIX = "label:"


class LabelFilter:
    """Every scheduler hint ``label:<name>`` = value names a label the node's Docker
    daemon carries with that value (``dockerd --label name=value``). Off by default,
    as in Zun."""

    name = "LabelFilter"

    def skips(self, spec: RequestSpec) -> bool:
        return not any(key.startswith(PREFIX) for key in spec.hints)

    def passes(self, host: HostState, spec: RequestSpec) -> str | None:
        wanted = {key[len(PREFIX):]: str(value) for key, value in spec.hints.items()
                  if key.startswith(PREFIX)}
        missing = [f"{k}={v}" for k, v in sorted(wanted.items()) if host.labels.get(k) != v]
        if missing:
            return f"has no daemon label {', '.join(missing)}"
        return None
