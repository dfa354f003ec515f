"""PodRuntime on containerd's CRI plugin, over gRPC on its unix socket.

The stubs are PyPI's ``container-runtime-interface-api`` (generated CRI v1 stubs,
package ``runtime.v1``); they are imported nowhere else. Every call goes through
:func:`_translated`, which maps gRPC status codes to berth's runtime errors::

    NOT_FOUND          -> RuntimeNotFound
    UNAVAILABLE        -> RuntimeUnavailable   (the socket does not answer)
    INVALID_ARGUMENT   -> RuntimeInvalid
    anything else      -> RuntimeDriverError   (with containerd's own words)

What the runtime leaves on the node after RemovePodSandbox (the pod's log directory,
its cgroup directories under ``cgroup_parent`` in every hierarchy) is removed by
:meth:`CriRuntime.remove_pod`.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import grpc
from cri_api.v1 import api_pb2 as cri
from cri_api.v1 import api_pb2_grpc as cri_grpc

from berth.runtime import base as rt
from berth.runtime.cri.base import Pod, PodSpec

LOG = logging.getLogger(__name__)

#: The CRI namespace of berth's pods (a Kubernetes namespace, for the runtime's logs).
POD_NAMESPACE = "berth"
CGROUP_ROOT = Path("/sys/fs/cgroup")

_POD = cri.NamespaceMode.Value("POD")
_CONTAINER = cri.NamespaceMode.Value("CONTAINER")
_SANDBOX_READY = cri.PodSandboxState.Value("SANDBOX_READY")
_PROTOCOLS = {"tcp": cri.Protocol.Value("TCP"), "udp": cri.Protocol.Value("UDP")}
_STATES = {cri.ContainerState.Value("CONTAINER_CREATED"): rt.RunState.CREATED,
           cri.ContainerState.Value("CONTAINER_RUNNING"): rt.RunState.RUNNING,
           cri.ContainerState.Value("CONTAINER_EXITED"): rt.RunState.EXITED}

T = TypeVar("T")


class CriRuntime:
    """One channel to containerd's socket, shared by every thread."""

    def __init__(self, socket: str, timeout: float, cgroup_parent: str, log_root: str,
                 pull_timeout: float = 600.0) -> None:
        self.socket = socket
        self.timeout = timeout
        self.pull_timeout = max(timeout, pull_timeout)
        self.cgroup_parent = "/" + cgroup_parent.strip("/")
        self.log_root = Path(log_root)
        self._channel = grpc.insecure_channel(f"unix://{socket}")
        self._runtime = cri_grpc.RuntimeServiceStub(self._channel)
        self._images = cri_grpc.ImageServiceStub(self._channel)

    def close(self) -> None:
        self._channel.close()

    # --- calls, each translated -------------------------------------------------

    def _call(self, method: Callable[..., T], request: Any, what: str) -> T:
        with _translated(self.socket, what):
            return method(request, timeout=self.timeout)

    def version(self) -> str:
        answer = self._call(self._runtime.Version, cri.VersionRequest(), "Version")
        return f"{answer.runtime_name} {answer.runtime_version} (CRI {answer.runtime_api_version})"

    def image_present(self, ref: str) -> bool:
        answer = self._call(self._images.ImageStatus,
                            cri.ImageStatusRequest(image=cri.ImageSpec(image=ref)), "ImageStatus")
        return bool(answer.image.id)

    def pull_image(self, ref: str, auth: rt.RegistryAuth | None = None) -> str:
        credentials = None if auth is None else cri.AuthConfig(
            username=auth.username, password=auth.password,
            server_address=_server_url(auth.registry))
        request = cri.PullImageRequest(image=cri.ImageSpec(image=ref), auth=credentials)
        try:
            with _translated(self.socket, "PullImage"):
                answer = self._images.PullImage(request, timeout=self.pull_timeout)
        except rt.RuntimeNotFound as err:
            raise rt.RuntimeImageNotFound(reason=err.msg) from err
        except rt.RuntimeUnavailable:
            raise
        except rt.RuntimeDriverError as err:
            raise rt.RuntimeImagePullFailed(reason=err.msg) from err
        return str(answer.image_ref)

    def run_pod(self, spec: PodSpec) -> str:
        log_dir = self.log_root / spec.uuid
        log_dir.mkdir(parents=True, exist_ok=True)
        request = cri.RunPodSandboxRequest(config=self._pod_config(spec),
                                           runtime_handler=spec.runtime_handler or "")
        try:
            return self._call(self._runtime.RunPodSandbox, request, "RunPodSandbox").pod_sandbox_id
        except rt.RuntimeDriverError:
            # containerd keeps a sandbox whose start failed (NOTREADY): find it by uid.
            for pod in self._list_pods({rt.LABEL_UUID: spec.uuid}):
                self.stop_pod(pod.id)       # its network torn down (CNI DEL) first
                self.remove_pod(pod.id, spec.uuid)
            shutil.rmtree(log_dir, ignore_errors=True)
            raise

    def stop_pod(self, pod_id: str) -> None:
        try:
            self._call(self._runtime.StopPodSandbox,
                       cri.StopPodSandboxRequest(pod_sandbox_id=pod_id), "StopPodSandbox")
        except rt.RuntimeNotFound:
            pass

    def remove_pod(self, pod_id: str, uuid: str) -> None:
        try:
            self._call(self._runtime.RemovePodSandbox,
                       cri.RemovePodSandboxRequest(pod_sandbox_id=pod_id), "RemovePodSandbox")
        except rt.RuntimeNotFound:
            pass
        shutil.rmtree(self.log_root / uuid, ignore_errors=True)
        for directory in self.cgroup_dirs(uuid):
            _remove_empty_tree(directory)

    def cgroup_dirs(self, uuid: str) -> list[Path]:
        """The pod's cgroup directories that exist (cgroup v1: one per hierarchy)."""
        relative = f"{self.cgroup_parent.lstrip('/')}/{uuid}"
        found = [CGROUP_ROOT / relative] + [h / relative for h in CGROUP_ROOT.iterdir()
                                            if h.is_dir() and not h.is_symlink()]
        return [d for d in found if d.is_dir()]

    def pod_ready(self, pod_id: str) -> bool:
        answer = self._call(self._runtime.PodSandboxStatus,
                            cri.PodSandboxStatusRequest(pod_sandbox_id=pod_id),
                            "PodSandboxStatus")
        return bool(answer.status.state == _SANDBOX_READY)

    def pod_netns(self, pod_id: str) -> str | None:
        answer = self._call(self._runtime.PodSandboxStatus,
                            cri.PodSandboxStatusRequest(pod_sandbox_id=pod_id, verbose=True),
                            "PodSandboxStatus")
        try:    # containerd's verbose info: the OCI spec it ran the sandbox with
            spec = json.loads(answer.info.get("info") or "{}").get("runtimeSpec") or {}
        except ValueError:
            return None
        for namespace in (spec.get("linux") or {}).get("namespaces") or []:
            if namespace.get("type") == "network" and namespace.get("path"):
                return str(namespace["path"])
        return None

    def pods(self, host: str) -> list[Pod]:
        return self._list_pods({rt.LABEL_HOST: host})

    def _list_pods(self, labels: dict[str, str]) -> list[Pod]:
        request = cri.ListPodSandboxRequest(filter=cri.PodSandboxFilter(label_selector=labels))
        answer = self._call(self._runtime.ListPodSandbox, request, "ListPodSandbox")
        return [Pod(id=p.id, uuid=p.metadata.uid, host=p.labels.get(rt.LABEL_HOST),
                    ready=p.state == _SANDBOX_READY) for p in answer.items]

    def create_member(self, pod_id: str, pod: PodSpec, spec: rt.ContainerSpec,
                      attempt: int = 0) -> str:
        request = cri.CreateContainerRequest(pod_sandbox_id=pod_id,
                                             config=_member_config(spec, attempt),
                                             sandbox_config=self._pod_config(pod))
        return self._call(self._runtime.CreateContainer, request, "CreateContainer").container_id

    def log_path(self, uuid: str, member_uuid: str) -> Path:
        return self.log_root / uuid / f"{member_uuid}.log"

    def exec_sync(self, member_id: str, argv: list[str], timeout: float) -> tuple[str, int]:
        request = cri.ExecSyncRequest(container_id=member_id, cmd=argv,
                                      timeout=max(1, int(timeout)))
        try:
            with _translated(self.socket, "ExecSync"):
                answer = self._runtime.ExecSync(request, timeout=timeout + 5)
        except rt.RuntimeDriverError as err:
            if "timeout" in err.msg.lower() or "deadline" in err.msg.lower():
                raise TimeoutError(err.msg) from err
            raise
        out = answer.stdout.decode(errors="replace") + answer.stderr.decode(errors="replace")
        return out, int(answer.exit_code)

    def exec_url(self, member_id: str, argv: list[str], tty: bool) -> str:
        request = cri.ExecRequest(container_id=member_id, cmd=argv, tty=tty, stdin=True,
                                  stdout=True, stderr=not tty)
        return str(self._call(self._runtime.Exec, request, "Exec").url)

    def attach_url(self, member_id: str, tty: bool) -> str:
        request = cri.AttachRequest(container_id=member_id, stdin=True, tty=tty,
                                    stdout=True, stderr=not tty)
        return str(self._call(self._runtime.Attach, request, "Attach").url)

    def remove_member(self, member_id: str) -> None:
        try:
            self._call(self._runtime.RemoveContainer,
                       cri.RemoveContainerRequest(container_id=member_id), "RemoveContainer")
        except rt.RuntimeNotFound:
            pass

    def start_member(self, member_id: str) -> None:
        self._call(self._runtime.StartContainer,
                   cri.StartContainerRequest(container_id=member_id), "StartContainer")

    def member(self, member_id: str) -> rt.RuntimeContainer:
        answer = self._call(self._runtime.ContainerStatus,
                            cri.ContainerStatusRequest(container_id=member_id), "ContainerStatus")
        s = answer.status
        state = _STATES.get(s.state, rt.RunState.UNKNOWN)
        exited = state == rt.RunState.EXITED
        return rt.RuntimeContainer(
            id=s.id, name=s.metadata.name, uuid=s.labels.get(rt.LABEL_UUID),
            image=s.image.image, labels=dict(s.labels),
            state=rt.ContainerState(
                status=state, running=state == rt.RunState.RUNNING,
                oom_killed=exited and s.reason == "OOMKilled",
                exit_code=s.exit_code if exited else None,
                error=s.message if exited and s.exit_code else "",
                started_at=_time(s.started_at), finished_at=_time(s.finished_at)))

    def host_members(self, host: str) -> list[rt.RuntimeContainer]:
        return self._list_members(cri.ContainerFilter(label_selector={rt.LABEL_HOST: host}))

    def members(self, pod_id: str) -> list[rt.RuntimeContainer]:
        return self._list_members(cri.ContainerFilter(pod_sandbox_id=pod_id))

    def _list_members(self, selector: Any) -> list[rt.RuntimeContainer]:
        request = cri.ListContainersRequest(filter=selector)
        answer = self._call(self._runtime.ListContainers, request, "ListContainers")
        out = []
        for c in answer.containers:
            state = _STATES.get(c.state, rt.RunState.UNKNOWN)
            out.append(rt.RuntimeContainer(
                id=c.id, name=c.metadata.name, uuid=c.labels.get(rt.LABEL_UUID),
                image=c.image.image, labels=dict(c.labels),
                state=rt.ContainerState(status=state, running=state == rt.RunState.RUNNING)))
        return out

    # --- requests ----------------------------------------------------------------

    def _pod_config(self, spec: PodSpec) -> Any:
        labels = {**spec.labels, rt.LABEL_UUID: spec.uuid, rt.LABEL_HOST: spec.host}
        return cri.PodSandboxConfig(
            metadata=cri.PodSandboxMetadata(name=spec.name or spec.uuid, uid=spec.uuid,
                                            namespace=POD_NAMESPACE),
            hostname=spec.hostname or "", log_directory=str(self.log_root / spec.uuid),
            labels=labels, annotations=dict(spec.annotations),
            port_mappings=[cri.PortMapping(protocol=_PROTOCOLS[p.protocol],
                                           container_port=p.container_port,
                                           host_port=p.host_port) for p in spec.ports],
            dns_config=None if spec.dns is None else cri.DNSConfig(
                servers=list(spec.dns.servers), searches=list(spec.dns.searches),
                options=list(spec.dns.options)),
            linux=cri.LinuxPodSandboxConfig(
                cgroup_parent=f"{self.cgroup_parent}/{spec.uuid}",
                security_context=cri.LinuxSandboxSecurityContext(
                    privileged=spec.privileged,
                    namespace_options=cri.NamespaceOption(network=_POD, ipc=_POD,
                                                          pid=_CONTAINER))))


def _member_config(spec: rt.ContainerSpec, attempt: int = 0) -> Any:
    """A member as CRI describes it: ``command`` is the image's entrypoint replaced,
    ``args`` its command replaced (Docker's and CRI's words for the same two)."""
    mounts = []
    for bind in spec.binds:
        host_path, container_path, *mode = bind.split(":")
        mounts.append(cri.Mount(host_path=host_path, container_path=container_path,
                                readonly="ro" in mode))
    resources = cri.LinuxContainerResources(
        cpu_shares=spec.cpu_shares or 0,
        memory_limit_in_bytes=(spec.memory_mib or 0) * 1024 * 1024)
    return cri.ContainerConfig(
        metadata=cri.ContainerMetadata(name=spec.uuid, attempt=attempt),
        image=cri.ImageSpec(image=spec.image),
        command=list(spec.entrypoint or ()), args=list(spec.command or ()),
        working_dir=spec.workdir or "",
        envs=[cri.KeyValue(key=k, value=v) for k, v in spec.environment.items()],
        mounts=mounts, labels={**spec.labels, rt.LABEL_UUID: spec.uuid, rt.LABEL_HOST: spec.host},
        log_path=f"{spec.uuid}.log", stdin=spec.interactive, tty=spec.tty,
        linux=cri.LinuxContainerConfig(
            resources=resources,
            security_context=cri.LinuxContainerSecurityContext(
                privileged=spec.privileged,
                namespace_options=cri.NamespaceOption(network=_POD, ipc=_POD,
                                                      pid=_CONTAINER))))


@contextmanager
def _translated(socket: str, what: str) -> Iterator[None]:
    try:
        yield
    except grpc.RpcError as err:
        code = err.code() if hasattr(err, "code") else None
        detail = err.details() if hasattr(err, "details") else str(err)
        reason = f"{what}: {detail}"
        if code == grpc.StatusCode.NOT_FOUND:
            raise rt.RuntimeNotFound(reason=reason) from err
        if code == grpc.StatusCode.UNAVAILABLE:
            raise rt.RuntimeUnavailable(
                reason=f"containerd does not answer on {socket} ({reason}): start it, or "
                       f"set [cri]containerd_socket to its socket") from err
        if code == grpc.StatusCode.INVALID_ARGUMENT:
            raise rt.RuntimeInvalid(reason=reason) from err
        raise rt.RuntimeDriverError(reason=reason) from err


def _server_url(registry: str | None) -> str:
    """AuthConfig's server address as containerd reads it: a URL, whose host it compares
    with the image's registry (a bare "host:port" is refused as a URL, and a bare
    "host" has no host part, so its credentials would be silently dropped)."""
    if not registry:
        return ""
    return registry if "://" in registry else f"https://{registry.rstrip('/')}"


def _time(nanos: int) -> dt.datetime | None:
    if not nanos:
        return None
    return dt.datetime.fromtimestamp(nanos / 1e9, tz=dt.UTC)


def _remove_empty_tree(top: Path) -> None:
    """rmdir a cgroup directory and the empty ones under it (cgroupfs refuses a
    directory that still has processes: logged, left for the next delete)."""
    for root, dirs, _files in os.walk(top, topdown=False):
        for name in dirs:
            _rmdir(Path(root) / name)
    _rmdir(top)


def _rmdir(path: Path) -> None:
    try:
        path.rmdir()
    except FileNotFoundError:
        pass
    except OSError as err:
        LOG.warning("could not remove cgroup directory %s: %s", path, err)
