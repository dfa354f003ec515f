"""The daemon's registry: every attachment it made or is making, and the networks they
are on, shared by its worker threads and persisted on every change.

An attachment's life, as the registry records it::

    reserve:  RESERVED (an address and the policy's rules, no namespace yet)
                 │
    ADD:      PLUGGING ──(veth made, interface up)──► ACTIVE
    DEL:                      RESERVED or ACTIVE ──► DELETING ──(veth gone)──► (no entry)

The entry is written *before* the host is changed, so a daemon killed at any point
finds, at its next start, an entry for everything it may have left: RESERVED, PLUGGING
and DELETING entries are undone (the caller never got an answer, and retries), ACTIVE ones
are kept and their addresses go back into IPAM. A network's spec stays while it has
entries.

The file is JSON, replaced atomically (written beside, renamed); one lock orders the
writers. Reads are served from memory. It is not fsynced: what it records (veths,
namespaces, the addresses they hold) does not outlive the kernel either, so the only
loss an fsync would guard against, a power cut, also removes everything the lost
lines described; a killed daemon finds every write in the page cache. Two fsyncs were
up to 10 ms of each ADD, on the path of a create (bench P1).
"""

from __future__ import annotations

import enum
import json
import logging
import os
import tempfile
import threading
from dataclasses import dataclass, replace

from berth.network.base import VIF, AttachmentKey, NetworkSpec
from berth.network.policy import Policy

LOG = logging.getLogger(__name__)

FORMAT_VERSION = 1


class State(enum.StrEnum):
    RESERVED = "reserved"
    PLUGGING = "plugging"
    ACTIVE = "active"
    DELETING = "deleting"


@dataclass(frozen=True, slots=True)
class Entry:
    vif: VIF
    state: State
    #: ``dev:ino`` of the namespace when it was plugged (see berth.network.netns).
    netns_id: str = ""
    #: Who may reach the interface (None: the network's own rules alone).
    policy: Policy | None = None
    #: When a RESERVED entry was made (wall clock, seconds): the sync pass drops a
    #: reservation no ADD claimed after ``RESERVATION_TTL``.
    reserved_at: float = 0.0

    @property
    def key(self) -> AttachmentKey:
        return self.vif.key

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"vif": self.vif.to_dict(), "state": str(self.state),
                                  "netns_id": self.netns_id}
        if self.policy is not None:
            out["policy"] = self.policy.to_dict()
        if self.reserved_at:
            out["reserved_at"] = self.reserved_at
        return out

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> Entry:
        policy = data.get("policy")
        return cls(vif=VIF.from_dict(data["vif"]),  # type: ignore[arg-type]
                   state=State(str(data["state"])), netns_id=str(data.get("netns_id", "")),
                   policy=Policy.from_dict(policy) if policy is not None else None,
                   reserved_at=float(data.get("reserved_at", 0.0)))  # type: ignore[arg-type]


def _encode(data: object) -> str:
    # json.dumps, not json.dump: dump writes through the pure-Python encoder, which
    # made the registry's saves most of the daemon's CPU in a burst of creates.
    return json.dumps(data, separators=(",", ":"))


class Registry:
    def __init__(self, path: str) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._entries: dict[AttachmentKey, Entry] = {}
        #: Each entry's JSON, kept beside it: a save joins them instead of encoding
        #: every attachment again (a burst of N creates would cost N² encodings).
        self._encoded: dict[AttachmentKey, str] = {}
        self._networks: dict[str, NetworkSpec] = {}

    def load(self) -> None:
        """Read the file (an absent file is an empty registry)."""
        try:
            with open(self.path, encoding="utf-8") as f:
                data = json.load(f)
        except FileNotFoundError:
            data = {}
        with self._lock:
            self._networks = {n["name"]: NetworkSpec.from_dict(n)
                              for n in data.get("networks", [])}
            self._entries, self._encoded = {}, {}
            for raw in data.get("attachments", []):
                self._keep(Entry.from_dict(raw))
        LOG.info("registry %s: %d attachment(s) on %d network(s)", self.path,
                 len(self._entries), len(self._networks))

    # -- reads --

    def get(self, key: AttachmentKey) -> Entry | None:
        with self._lock:
            return self._entries.get(key)

    def entries(self, network: str | None = None) -> list[Entry]:
        with self._lock:
            return [e for e in self._entries.values()
                    if network is None or e.key.network == network]

    def network(self, name: str) -> NetworkSpec | None:
        with self._lock:
            return self._networks.get(name)

    def networks(self) -> list[NetworkSpec]:
        with self._lock:
            return list(self._networks.values())

    # -- writes (each one persisted before it returns) --

    def put(self, entry: Entry, spec: NetworkSpec) -> None:
        with self._lock:
            self._networks[spec.name] = spec
            self._keep(entry)
            self._save()

    def set_state(self, key: AttachmentKey, state: State, vif: VIF | None = None) -> Entry:
        with self._lock:
            entry = replace(self._entries[key], state=state)
            if vif is not None:
                entry = replace(entry, vif=vif)
            self._keep(entry)
            self._save()
            return entry

    def set_policy(self, key: AttachmentKey, policy: Policy | None) -> Entry:
        with self._lock:
            entry = replace(self._entries[key], policy=policy)
            self._keep(entry)
            self._save()
            return entry

    def remove(self, key: AttachmentKey) -> None:
        with self._lock:
            if self._entries.pop(key, None) is not None:
                del self._encoded[key]
                self._save()

    def drop_network(self, name: str) -> None:
        """Forget a network; refused while it still has entries."""
        with self._lock:
            if any(k.network == name for k in self._entries):
                raise ValueError(f"network {name} still has attachments")
            if self._networks.pop(name, None) is not None:
                self._save()

    def _keep(self, entry: Entry) -> None:
        self._entries[entry.key] = entry
        self._encoded[entry.key] = _encode(entry.to_dict())

    def _save(self) -> None:
        text = (f'{{"version":{FORMAT_VERSION},'
                f'"networks":{_encode([s.to_dict() for s in self._networks.values()])},'
                f'"attachments":[{",".join(self._encoded.values())}]}}')
        folder = os.path.dirname(os.path.abspath(self.path))
        os.makedirs(folder, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".registry-", dir=folder)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(tmp, self.path)
        except BaseException:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
            raise
