"""One stack's offline plan: the program under mocks, judged by the policy pack, written to build/<stack>/."""
from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Collection

from components.config import SpecError
from components.config.config_source import SECRET_KEYS, spec_from_values
from components.config.invocation import relative, running
from components.plan.extra_resources import ExtraResourcesError, extra_resources
from components.plan.stack_files import StackConfig, StackFileError, read_stack_config, with_placeholders

ROOT = Path(__file__).resolve().parents[2]
EXIT_OK, EXIT_POLICY, EXIT_CONFIG = 0, 1, 2
MAX_SHOWN = 40  # problems printed; the rest are counted
WANTS_TEXT = ("write text", "should be '", "not valid here")  # problems of a field that takes text


def judge(resources, pack_dir: Path, policy_config: dict | None = None) -> dict:
    """Every resource through Analyze, then the whole stack through AnalyzeStack, the pack run by the interpreter the
    CLI would run it with."""
    from components.plan.analyzer import PolicyPackProcess
    from components.plan.pack_runtime import pack_python
    providers = {r.urn: r for r in resources if r.type.startswith("pulumi:providers:")}
    with PolicyPackProcess(pack_dir, python=pack_python(pack_dir)) as pack:
        info = pack.info()
        pack.configure(policy_config or {})
        diagnostics = [d for r in resources for d in pack.analyze(r, providers)]
        diagnostics += pack.analyze_stack(resources, providers)
    return {"pack": info.name, "policies": sorted(p.name for p in info.policies),
            "violations": [d.as_dict() for d in diagnostics]}


def summary(stack: str, resources, report: dict, waves: list[list[str]], canaries: Collection[str] = ()) -> str:
    lines = [f"stack {stack}: {len(resources)} resources"]
    for kind, count in sorted(Counter(r.type for r in resources).items()):
        lines.append(f"  {count:5d}  {kind}")
    lines.append(f"rollout: {sum(len(w) for w in waves)} nodes in {len(waves)} waves")
    for i, wave in enumerate(waves):
        lines.append(f"  wave {i}{wave_text(wave, canaries)}")
    mandatory = [v for v in report["violations"] if v["enforcementLevel"] == "mandatory"]
    lines.append(f"policy pack {report['pack']}: {len(report['policies'])} policies, "
                 f"{len(mandatory)} mandatory and {len(report['violations']) - len(mandatory)} other violations")
    for v in report["violations"]:
        message = v['message'].splitlines()[-1]
        lines.append(f"  [{v['enforcementLevel']}] {v['policy']}: {message} ({v['urn'].rsplit('::', 1)[-1]})")
    return "\n".join(lines)


def wave_text(wave: list[str], canaries: Collection[str], shown: int = 6) -> str:
    """`: a, b ...` after a wave's number; a wave of canaries says so, a canary among other nodes is marked."""
    if wave and all(name in canaries for name in wave):
        head, names = " (canary)", wave[:shown]
    else:
        head, names = "", [f"{name} (canary)" if name in canaries else name for name in wave[:shown]]
    return f"{head}: {', '.join(names)}" + (f" ... (+{len(wave) - shown})" if len(wave) > shown else "")


def run_stack(config: StackConfig) -> list:
    """The real program under mocks with one stack's config; every registered resource."""
    from components.plan.recorder import run_program
    return run_program(ROOT / "__main__.py", config.project, config.stack, config.values, config.secret_keys)


def load_config(stack: str, stack_file: Path | None = None, placeholders: tuple[str, ...] = ()) -> StackConfig:
    """The stack's config as the CLI hands it over, with a placeholder for each secret key named; or StackFileError."""
    return with_placeholders(read_stack_config(ROOT, stack, stack_file), list(placeholders), list(SECRET_KEYS))


def chart_values_text(stack: str, values: dict) -> str:
    """The stack's Helm values as the file build/<stack>/chart-values.yaml holds them."""
    import yaml
    return (f"# Helm values of stack {stack}: helm install ascend-npu charts/ascend-npu -n kube-system -f <this file>\n"
            + yaml.safe_dump(values, sort_keys=False))


def stack_chart_values(config: StackConfig) -> dict:
    """The Helm values of a stack: what the program builds its cluster objects from (no secret in them)."""
    from components.cluster.values_contract import chart_values
    return chart_values(spec_from_values(config.values, config.secret_keys, stack=config.stack), managed_by="Helm")


def config_problems(exc: SpecError, config: StackConfig, limit: int = MAX_SHOWN) -> str:
    """The problems of a refused config, one line each, at most `limit`; a number the file wrote unquoted where
    text belongs gets a hint to quote it."""
    lines = []
    for problem in exc.problems[:limit]:
        text = config.numbers.get(f"{config.project}:{problem.field}")
        hint = f" (the file says {text} unquoted, which YAML reads as a number: to mean text, quote it: '{text}')" \
            if text is not None and any(k in problem.message for k in WANTS_TEXT) else ""
        lines.append(f"  - {problem}{hint}")
    if len(exc.problems) > limit:
        lines.append(f"  ... and {len(exc.problems) - limit} more; fix these first")
    return f"the stack config has {len(exc.problems)} problem(s); nothing was changed:\n" + "\n".join(lines)


def plan(stack: str, out_dir: Path, stack_file: Path | None = None, quiet: bool = False,
         pack_dir: Path | None = None, pack_config: dict | None = None, extra: Path | None = None,
         placeholders: tuple[str, ...] = ()) -> int:
    """`make plan`: the stack planned offline and judged; 0, or the exit code of what refused it."""
    with running("make plan", stack, EXTRA_RESOURCES=relative(extra) if extra else None):
        return _plan(stack, out_dir, stack_file, quiet, pack_dir, pack_config, extra, placeholders)


def _plan(stack: str, out_dir: Path, stack_file: Path | None, quiet: bool, pack_dir: Path | None,
          pack_config: dict | None, extra: Path | None, placeholders: tuple[str, ...]) -> int:
    try:
        config = load_config(stack, stack_file, placeholders)
    except StackFileError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    try:
        spec = spec_from_values(config.values, config.secret_keys, stack=config.stack)  # the program's first step
        added = extra_resources(extra, config) if extra else []
        resources = run_stack(config) + added
    except SpecError as exc:
        print(f"error: {config_problems(exc, config)}", file=sys.stderr)
        return EXIT_CONFIG
    except ExtraResourcesError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    from components.bundle.listing import digest_warning
    from components.cluster.values_contract import chart_values
    from components.plan.analyzer import PolicyPackError
    from components.plan.graph import mermaid
    try:
        report = judge(resources, pack_dir or ROOT / "policies", pack_config)
    except PolicyPackError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_POLICY
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "resources.json").write_text(json.dumps([r.public() for r in resources], indent=1, sort_keys=True))
    (out_dir / "policy-report.json").write_text(json.dumps(report, indent=1, sort_keys=True))
    (out_dir / "graph.mmd").write_text(mermaid(resources))
    values = chart_values(spec, managed_by="Helm")
    (out_dir / "chart-values.yaml").write_text(chart_values_text(stack, values))
    stack_resource = next(r for r in resources if r.type == "pulumi:pulumi:Stack")
    waves = stack_resource.outputs.get("waves", [])
    warning = digest_warning(values)
    if warning:
        print(warning, file=sys.stderr)
    if not quiet:
        print(summary(stack, resources, report, waves, spec.canaries))
        print(f"wrote {relative(out_dir)}/"
              "{resources.json,policy-report.json,graph.mmd,chart-values.yaml}")
    failed = [v for v in report["violations"] if v["enforcementLevel"] == "mandatory"]
    if failed:
        print(f"error: mandatory policies violated: {', '.join(sorted({v['policy'] for v in failed}))}",
              file=sys.stderr)
        return EXIT_POLICY
    return EXIT_OK
