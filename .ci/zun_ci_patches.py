"""The one change zun-ci.sh makes to Zun 18: its VIFs carry the binding's datapath type.

Zun's translation of a Neutron port into an os-vif VIFOpenVSwitch (zun.network.os_vif_util)
drops ``binding:vif_details['datapath_type']``. os-vif then takes the kernel datapath
("system") and its plug re-declares the integration bridge with that type
(``add-br br-int may_exist datapath_type=system``). On an Open vSwitch that runs the
userspace datapath only (this kernel has no openvswitch module), that turns br-int into a
bridge that cannot exist: ovs-vswitchd logs "failed to open datapath br-int", br-int loses
every port and the Neutron OVS agent reports "OVS is down". This module, loaded from a .pth
file in Zun's venv, sets the port profile's datapath_type from the binding after Zun's own
translation; nothing else in Zun is touched. ZUN_CI_DATAPATH_PATCH=0 in the environment of
a Zun process turns it off.
"""
import importlib.abc
import importlib.util
import os
import sys

TARGET = 'zun.network.os_vif_util'


def _patch(module):
    translate = module.neutron_to_osvif_vif_ovs

    def neutron_to_osvif_vif_ovs(vif_plugin, neutron_port, network, subnets):
        vif = translate(vif_plugin, neutron_port, network, subnets)
        datapath = (neutron_port.get('binding:vif_details') or {}).get('datapath_type')
        if datapath:
            vif.port_profile.datapath_type = datapath
        return vif

    module.neutron_to_osvif_vif_ovs = neutron_to_osvif_vif_ovs


class _AfterImport(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != TARGET:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            _patch(module)

        spec.loader.exec_module = exec_module
        return spec


if os.environ.get('ZUN_CI_DATAPATH_PATCH', '1') != '0':
    sys.meta_path.insert(0, _AfterImport())
