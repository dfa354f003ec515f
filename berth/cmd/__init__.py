"""Entry points, one per process, containing only wiring: ``berth`` (serve, db),
``berth-api``, ``berth-compute``, ``berth-wsproxy``, ``berth-cni-daemon``, ``berth-cni``
(the CNI plugin a runtime executes) and ``berth-status`` (upgrade check). ``wiring``
(and ``neutron_wiring``) build berth's parts from the configuration; ``helptext`` holds
what their ``--help`` says."""

from berth.common.imports import shallow_package

# requests imports charset_normalizer (2 MiB of every process) only to guess the
# encoding of a body whose headers name none, which the services berth talks to do not
# send (Docker's and OpenStack's answers are JSON): it is loaded the first time
# requests asks it to guess (berth.common.imports).
try:
    shallow_package("charset_normalizer", {"__version__": "charset_normalizer.version"})
except ImportError:     # not installed: requests goes without it
    pass

# oslo.policy imports PyYAML at its top to read a policy file, and berth reads YAML
# only in a capsule's template: a process that does neither does not load it (0.7
# MiB); the first ``yaml.safe_load`` runs the package's ``__init__``.
shallow_package("yaml")
