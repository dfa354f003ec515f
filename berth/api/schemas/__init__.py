"""Request bodies, declared once (api-v1.md §1.1, §3, §7, §10, §12, §13).

Each body the API reads is a JSON Schema declaration (``container``: create and
update; ``resources``: registries, image pulls, quotas) written with the vocabulary of
``fields``. ``validation`` checks a body against its declaration and raises, in Zun's
words:

* :class:`~berth.common.exceptions.InvalidParameterValue` (400) for bad input, with a
  message of the form ``Invalid input for field '<field>'. Value: '<value>'. <why>``;
* :class:`~berth.common.exceptions.InvalidParamInVersion` (400) for a field sent at a
  microversion that predates it;

and ``berth.api.openapi`` publishes the same declarations in ``/openapi.json``. What a
declaration cannot say (a numeric string's bounds, shell quoting, base64, policies
such as :class:`~berth.common.exceptions.PolicyNotAuthorized`, 403) is checked by the
module that normalises the body. ``types`` parses query parameters and action
arguments, which are not bodies.
"""
