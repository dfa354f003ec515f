"""Quota enforcement, shared by the API (creates) and the agents (resizes): see
``enforce``."""

from berth.quota.enforce import QuotaEnforcer, limited_growth, overs

__all__ = ["QuotaEnforcer", "limited_growth", "overs"]
