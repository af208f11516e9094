"""`python -m components.chart [write|check|package|template]`: write the chart, check it, package it, render it."""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from components.chart.writer import CHART_DIR, DIST_DIR, drift, package_chart, write_chart
from components.config.invocation import relative


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m components.chart", description=__doc__)
    parser.add_argument("command", nargs="?", default="write", choices=("write", "check", "package", "template"),
                        help="write the chart (default), fail when the committed chart differs from the "
                             "generator, package it into dist/ with the Helm engine, or render it with a "
                             "stack's values (template)")
    parser.add_argument("--stack", default="dev", help="template: the stack whose values to render (default dev)")
    parser.add_argument("--out", type=Path, help="template: output directory (default build/<stack>)")
    parser.add_argument("--placeholder-secrets", default="", help="template: secret keys to render without")
    parser.add_argument("--chart-dir", type=Path, default=CHART_DIR, help=f"chart directory (default {CHART_DIR})")
    parser.add_argument("--dist-dir", type=Path, default=DIST_DIR, help=f"package destination (default {DIST_DIR})")
    args = parser.parse_args(argv)
    started = time.monotonic()
    if args.command == "template":
        from components.chart.template import render_stack
        from components.plan.stack_files import placeholder_keys
        return render_stack(args.stack, args.out or Path("build") / args.stack,
                            placeholders=placeholder_keys(args.placeholder_secrets), chart_dir=args.chart_dir)
    if args.command == "check":
        problems = drift(args.chart_dir)
        for problem in problems:
            print(f"{relative(args.chart_dir)}: {problem}", file=sys.stderr)
        if problems:
            print("the chart differs from the generator; run `make chart`", file=sys.stderr)
            return 1
        print(f"{relative(args.chart_dir)} matches the generator")
        return 0
    written = write_chart(args.chart_dir)
    print(f"wrote {len(written)} files to {relative(args.chart_dir)} in {time.monotonic() - started:.2f}s")
    if args.command == "package":
        print(f"packaged {relative(package_chart(args.chart_dir, args.dist_dir))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
