"""The command the user ran, so that a hint says how to run it again: `make template STACK=lab ...`, not `make plan`."""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Optional

CLONE = Path(__file__).resolve().parents[2]

# The make targets that read a stack file offline and take PLACEHOLDER_SECRETS (Makefile); the Pulumi program
# (preview, up) reads the engine's config, where a secret is set or absent.
OFFLINE = ("make plan", "make template", "make bundle")


@dataclass(frozen=True)
class Invocation:
    """A command with the stack it ran for and the other make variables the user gave (CHECK=site, OUT=dir)."""

    command: str
    stack: str
    settings: tuple[tuple[str, str], ...] = ()

    def again(self, **more: str) -> str:
        """The same command with MORE variables added or replaced, as one line to paste."""
        variables = {"STACK": self.stack, **dict(self.settings), **more}
        return " ".join([self.command, *(f"{k}={v}" for k, v in variables.items() if v)])

    def without(self, keys: str) -> Optional[str]:
        """The command again planning without the secrets KEYS (comma-separated), or None where none can."""
        return self.again(PLACEHOLDER_SECRETS=keys) if self.command in OFFLINE else None


# One per process, not a ContextVar: the doctor's worker threads give hints too.
_RAN: list[Invocation] = []


@contextmanager
def running(command: str, stack: str, **settings: object) -> Iterator[Invocation]:
    """What an entry point runs as, for the hints given inside it (unset variables left out)."""
    found = Invocation(command, stack, tuple((k, str(v)) for k, v in settings.items() if v))
    _RAN.append(found)
    try:
        yield found
    finally:
        _RAN.pop()


def recorded() -> Optional[Invocation]:
    """What the entry point recorded, if any."""
    return _RAN[-1] if _RAN else None


def current(stack: str) -> Invocation:
    """What was run; a caller that recorded nothing is the Pulumi program (`pulumi preview` / `up`) for STACK."""
    found = recorded()
    return found if found is not None and found.stack == stack else Invocation("pulumi", stack)


def relative(path: Path | str) -> str:
    """PATH as a hint shows it: relative to the clone when inside it (the docs' form), else as it is."""
    full = Path(path).resolve()
    return str(full.relative_to(CLONE)) if full.is_relative_to(CLONE) else str(path)
