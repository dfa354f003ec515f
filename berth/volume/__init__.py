"""Volume drivers: where a container's volumes come from (``[volume]driver``) and how
one is made usable on a node. ``base`` is the interface, ``local`` the embedded
default, ``cinder`` OpenStack Cinder's volumes (``cinder_api`` its REST API,
``cinder_brick`` os-brick on the node), ``mounts`` what is mounted on the node, and
``drivers`` builds the enabled ones from the configuration."""
