"""Request validation and normalisation for the REST API (api-v1.md §1.1, §3, §7).

The modules here are pure: they take the decoded JSON body (or query values), the
negotiated :class:`~berth.api.microversions.APIVersion` and the caller's admin flag,
and either return plain, normalised Python values or raise a
:class:`~berth.common.exceptions.BerthError` that the API maps to an HTTP status:

* :class:`~berth.common.exceptions.InvalidParameterValue` (400) for bad input, with a
  message of the form ``Invalid input for field '<field>'. Value: '<value>'. <why>``;
* :class:`~berth.common.exceptions.InvalidParamInVersion` (400) for a field sent at a
  microversion that predates it;
* :class:`~berth.common.exceptions.PolicyNotAuthorized` (403) for admin-only fields.

``types`` holds small reusable field parsers; ``container`` validates container
create (``POST /v1/containers``) and update (``PATCH /v1/containers/{ident}``) bodies.
"""
