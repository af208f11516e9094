"""Value placeholders: how a builder leaves a value-dependent decision to a sink that writes templates."""
from __future__ import annotations

import functools
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Callable, Iterator, Optional, Protocol, TypeVar

Function = TypeVar("Function", bound=Callable[..., Any])
# What a template function returns when its result is entries for the mapping it is unpacked into (`{**spec,
# **f(values)}`), maybe none: a chart writes its helper's YAML among that mapping's entries, not as a merge.
Entries = dict


class TemplateSink(Protocol):
    """A sink that builds objects from placeholders and expresses template functions as its own helpers."""

    def express(self, helper: str, function: Callable[..., Any], args: tuple[Any, ...]) -> Optional[Any]:
        """The stand-in for `function(*args)` when an argument holds a placeholder, else None."""


_ACTIVE_SINK: ContextVar[Optional[TemplateSink]] = ContextVar("active_template_sink", default=None)


@contextmanager
def building_for(sink: TemplateSink) -> Iterator[None]:
    """Within the block, template functions ask `sink` before they run."""
    token = _ACTIVE_SINK.set(sink)
    try:
        yield
    finally:
        _ACTIVE_SINK.reset(token)


def template_function(helper: str) -> Callable[[Function], Function]:
    """Mark a function of values that a template sink writes as its helper named `helper`."""
    # With plain values the function runs as written, so the Pulumi sink never sees a difference. A chart
    # cannot run Python per release: it writes the helper instead, which must decide exactly as the
    # function does (the chart tests render both with the real Helm engine and compare).
    def wrap(function: Function) -> Function:
        @functools.wraps(function)
        def call(*args: Any) -> Any:
            sink = _ACTIVE_SINK.get()
            if sink is not None:
                stand_in = sink.express(helper, function, args)
                if stand_in is not None:
                    return stand_in
            return function(*args)

        call.template_helper = helper  # type: ignore[attr-defined]
        return call  # type: ignore[return-value]
    return wrap
