"""Helpers shared by the functional and integration tests."""
