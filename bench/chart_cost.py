"""The chart generator's cost: builds and CPU seconds of its switches, against a build of every combination."""
from __future__ import annotations

import time
from typing import Any

from components.chart.switches import Explorer
from components.cluster.values_contract import values_schema


def measure_chart() -> dict[str, Any]:
    """Builds and CPU seconds of `Explorer.objects` and of `Explorer.every_combination`, on the current switches."""
    explorer = Explorer(values_schema())
    count, build = [0], explorer.build

    def counted(*args: Any) -> Any:
        count[0] += 1
        return build(*args)

    explorer.build = counted  # type: ignore[method-assign]
    figures: dict[str, Any] = {"flags": len(explorer.flags), "choices": len(explorer.choices)}
    for name, explore in (("objects", explorer.objects), ("every_combination", explorer.every_combination)):
        count[0], started = 0, time.process_time()
        explore()
        figures[name] = (count[0], time.process_time() - started)
    return figures


def print_chart_cost(figures: dict[str, Any]) -> None:
    print(f"chart generator, {figures['flags']} flags and {figures['choices']} choices: " + ", ".join(
        f"{name} {builds} builds {cpu:.2f} s CPU" for name, (builds, cpu) in
        ((n, figures[n]) for n in ("objects", "every_combination"))))


if __name__ == "__main__":
    print_chart_cost(measure_chart())
