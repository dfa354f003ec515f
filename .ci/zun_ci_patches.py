"""The three changes zun-ci.sh makes to Zun 18, each a bug of Zun's that this machine hits.

1. Its VIFs carry the binding's datapath type (``zun.network.os_vif_util``). Zun's
   translation of a Neutron port into an os-vif VIFOpenVSwitch drops
   ``binding:vif_details['datapath_type']``. os-vif then takes the kernel datapath
   ("system") and its plug re-declares the integration bridge with that type
   (``add-br br-int may_exist datapath_type=system``). On an Open vSwitch that runs the
   userspace datapath only (this kernel has no openvswitch module), that turns br-int into
   a bridge that cannot exist: ovs-vswitchd logs "failed to open datapath br-int", br-int
   loses every port and the Neutron OVS agent reports "OVS is down". The patch sets the
   port profile's datapath_type from the binding after Zun's own translation.
   ZUN_CI_DATAPATH_PATCH=0 in the environment of a Zun process turns it off.

2. A capsule's sandbox is plugged as a capsule (``zun.network.cni_network``). Zun's CNI
   network driver calls zun-cni with ``CNI_ARGS=...;ZUN_CONTAINER_TYPE=CONTAINER`` for
   every container, a capsule's sandbox too; zun-cni-daemon then looks the capsule's uuid
   up among containers ("ContainerNotFound: Container <capsule uuid> could not be
   found"), the plug fails, Zun stops the sandbox (exit 137) and the member's start
   answers 409 "cannot join network of a non running container": every capsule ends in
   Error. The patch names the type CAPSULE for a capsule (the daemon's own default, the
   value it expects). ZUN_CI_CAPSULE_CNI_PATCH=0 turns it off.

3. os-brick is given Cinder's connection info (``zun.volume.cinder_workflow``). Zun makes
   its os-brick connector from the protocol alone; a file-based one (Cinder's NFS driver,
   the CI's Cinder) takes its mount point base from the connection info (``conn``, as Nova
   passes it) and without it cannot be made: every attach fails with os-brick's
   "InvalidParameterValue: nfs_mount_point_base required" and the container ends in
   Error. The patch passes the connection info as ``conn``, to connect and to
   disconnect.
   ZUN_CI_CINDER_CONN_PATCH=0 turns it off.

Loaded from a .pth file in Zun's venv; nothing else in Zun is touched.
"""
import importlib.abc
import importlib.util
import os
import sys


def _datapath(module):
    translate = module.neutron_to_osvif_vif_ovs

    def neutron_to_osvif_vif_ovs(vif_plugin, neutron_port, network, subnets):
        vif = translate(vif_plugin, neutron_port, network, subnets)
        datapath = (neutron_port.get('binding:vif_details') or {}).get('datapath_type')
        if datapath:
            vif.port_profile.datapath_type = datapath
        return vif

    module.neutron_to_osvif_vif_ovs = neutron_to_osvif_vif_ovs


def _capsule_cni(module):
    env_of = module.ZunCNI._get_env_variables

    def _get_env_variables(self, container, pid, cmd):
        env = env_of(self, container, pid, cmd)
        if getattr(container, 'container_type', None) == module.consts.TYPE_CAPSULE:
            env['CNI_ARGS'] = env['CNI_ARGS'].replace('ZUN_CONTAINER_TYPE=CONTAINER',
                                                      'ZUN_CONTAINER_TYPE=CAPSULE')
        return env

    module.ZunCNI._get_env_variables = _get_env_variables


def _cinder_conn(module):
    def connector(conn_info):
        return module.get_volume_connector(conn_info['driver_volume_type'], conn=conn_info)

    def _connect_volume(self, conn_info):
        return connector(conn_info).connect_volume(conn_info['data'])

    def _disconnect_volume(self, conn_info):
        connector(conn_info).disconnect_volume(conn_info['data'], None)

    module.CinderWorkflow._connect_volume = _connect_volume
    module.CinderWorkflow._disconnect_volume = _disconnect_volume


PATCHES = {name: patch for name, patch, switch in (
    ('zun.network.os_vif_util', _datapath, 'ZUN_CI_DATAPATH_PATCH'),
    ('zun.network.cni_network', _capsule_cni, 'ZUN_CI_CAPSULE_CNI_PATCH'),
    ('zun.volume.cinder_workflow', _cinder_conn, 'ZUN_CI_CINDER_CONN_PATCH'))
    if os.environ.get(switch, '1') != '0'}


class _AfterImport(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        patch = PATCHES.pop(name, None)
        if patch is None:
            return None
        if not PATCHES:
            sys.meta_path.remove(self)
        # the finders after this one find the module (find_spec would ask this one again)
        spec = next(s for s in (f.find_spec(name, path, target) for f in sys.meta_path
                                if f is not self and hasattr(f, 'find_spec')) if s)
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            patch(module)

        spec.loader.exec_module = exec_module
        return spec


if PATCHES:
    sys.meta_path.insert(0, _AfterImport())
