"""The host tests' fixtures (a fresh fake Ascend node per test, the command provider stand-in), for the runner's."""
from tests.host.conftest import node, packages, provider  # noqa: F401 (fixtures)
