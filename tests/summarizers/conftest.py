"""The CLI fixture, for the tests that run compactctl against a real model server."""

from tests.cli.conftest import cli  # noqa: F401
