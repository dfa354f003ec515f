"""Volume drivers: where a container's volumes come from (``[volume]driver``) and how
one is made usable on a node. ``base`` is the interface, ``local`` the embedded
default, ``drivers`` builds the enabled ones from the configuration."""
