"""`make plan`: run the program offline for one stack, judge it with the policy pack, write build/<stack>/."""
from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

from components.plan.stack_files import StackConfig, StackFileError, read_stack_config
from components.spec import SpecError
from components.spec.config_source import spec_from_values

ROOT = Path(__file__).resolve().parents[2]
EXIT_OK, EXIT_POLICY, EXIT_CONFIG = 0, 1, 2
MAX_SHOWN = 40  # problems printed; the rest are counted
WANTS_TEXT = ("write text", "should be '", "not valid here")  # problems of a field that takes text


def judge(resources, pack_dir: Path, policy_config: dict | None = None) -> dict:
    """Every resource through Analyze, then the whole stack through AnalyzeStack."""
    from components.plan.analyzer import PolicyPackProcess
    providers = {r.urn: r for r in resources if r.type.startswith("pulumi:providers:")}
    with PolicyPackProcess(pack_dir) as pack:
        info = pack.info()
        pack.configure(policy_config or {})
        diagnostics = [d for r in resources for d in pack.analyze(r, providers)]
        diagnostics += pack.analyze_stack(resources, providers)
    return {"pack": info.name, "policies": sorted(p.name for p in info.policies),
            "violations": [d.as_dict() for d in diagnostics]}


def summary(stack: str, resources, report: dict, waves: list[list[str]]) -> str:
    lines = [f"stack {stack}: {len(resources)} resources"]
    for kind, count in sorted(Counter(r.type for r in resources).items()):
        lines.append(f"  {count:5d}  {kind}")
    lines.append(f"rollout: {sum(len(w) for w in waves)} nodes in {len(waves)} waves")
    for i, wave in enumerate(waves):
        shown = ", ".join(wave[:6]) + (f" ... (+{len(wave) - 6})" if len(wave) > 6 else "")
        lines.append(f"  wave {i}{' (canary)' if i == 0 else ''}: {shown}")
    mandatory = [v for v in report["violations"] if v["enforcementLevel"] == "mandatory"]
    lines.append(f"policy pack {report['pack']}: {len(report['policies'])} policies, "
                 f"{len(mandatory)} mandatory and {len(report['violations']) - len(mandatory)} other violations")
    for v in report["violations"]:
        message = v['message'].splitlines()[-1]
        lines.append(f"  [{v['enforcementLevel']}] {v['policy']}: {message} ({v['urn'].rsplit('::', 1)[-1]})")
    return "\n".join(lines)


def run_stack(config: StackConfig) -> list:
    """The real program under mocks with one stack's config; every registered resource."""
    from components.plan.recorder import run_program
    return run_program(ROOT / "__main__.py", config.project, config.stack, config.values, config.secret_keys)


class ExtraResourcesError(Exception):
    """A `--extra-resources` file that cannot be read as resources."""


def extra_resources(path: Path, config: StackConfig) -> list:
    """Resources from a YAML file (`{type, name, properties}`, one or a list), recorded as if the stack registered
    them: a manifest tried against the pack with the stack's own objects."""
    import yaml
    from components.plan.recorder import Recorded
    try:
        docs = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise ExtraResourcesError(f"{path}: cannot read it ({exc})") from exc
    docs = docs if isinstance(docs, list) else [docs]
    recorded = []
    for i, doc in enumerate(docs):
        if not (isinstance(doc, dict) and isinstance(doc.get("type"), str) and isinstance(doc.get("name"), str)
                and isinstance(doc.get("properties"), dict)):
            raise ExtraResourcesError(f"{path}: resource {i} needs `type` (e.g. kubernetes:core/v1:Pod), `name` and "
                                 "`properties` (the object)")
        urn = f"urn:pulumi:{config.stack}::{config.project}::{doc['type']}::{doc['name']}"
        recorded.append(Recorded(urn=urn, type=doc["type"], name=doc["name"], parent="", custom=True,
                                 dependencies=[], property_dependencies={}, provider="",
                                 properties=doc["properties"]))
    return recorded


def stack_chart_values(config: StackConfig) -> dict:
    """The Helm values of a stack: what the program builds its cluster objects from (no secret in them)."""
    from components.cluster.values import chart_values
    return {**chart_values(spec_from_values(config.values, config.secret_keys)), "managedBy": "Helm"}


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
         pack_dir: Path | None = None, pack_config: dict | None = None, extra: Path | None = None) -> int:
    try:
        config = read_stack_config(ROOT, stack, stack_file)
    except StackFileError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    try:
        spec_from_values(config.values, config.secret_keys)  # the program's own first step, without the engine
        added = extra_resources(extra, config) if extra else []
        resources = run_stack(config) + added
    except SpecError as exc:
        print(f"error: {config_problems(exc, config)}", file=sys.stderr)
        return EXIT_CONFIG
    except ExtraResourcesError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    import yaml
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
    (out_dir / "chart-values.yaml").write_text(
        f"# Helm values of stack {stack}: helm install ascend-npu charts/ascend-npu -n kube-system -f <this file>\n"
        + yaml.safe_dump(stack_chart_values(config), sort_keys=False))
    stack_resource = next(r for r in resources if r.type == "pulumi:pulumi:Stack")
    waves = stack_resource.outputs.get("waves", [])
    if not quiet:
        print(summary(stack, resources, report, waves))
        print(f"wrote {out_dir.relative_to(ROOT) if out_dir.is_relative_to(ROOT) else out_dir}/"
              "{resources.json,policy-report.json,graph.mmd,chart-values.yaml}")
    failed = [v for v in report["violations"] if v["enforcementLevel"] == "mandatory"]
    if failed:
        print(f"error: mandatory policies violated: {', '.join(sorted({v['policy'] for v in failed}))}",
              file=sys.stderr)
        return EXIT_POLICY
    return EXIT_OK


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="make plan", description=__doc__)
    parser.add_argument("--stack", default="dev", help="stack name: reads Pulumi.<stack>.yaml (default: dev)")
    parser.add_argument("--stack-file", type=Path, help="read this stack file instead of Pulumi.<stack>.yaml")
    parser.add_argument("--out", type=Path, help="output directory (default: build/<stack>)")
    parser.add_argument("--policy-pack", type=Path, help="policy pack folder (default: policies)")
    parser.add_argument("--policy-pack-config", type=Path,
                        help="JSON file of per-policy config, as `pulumi preview --policy-pack-config` takes")
    parser.add_argument("--extra-resources", type=Path,
                        help="YAML file of resources ({type, name, properties}, one or a list) judged with the stack's")
    args = parser.parse_args(argv)
    pack_config = json.loads(args.policy_pack_config.read_text()) if args.policy_pack_config else None
    return plan(args.stack, args.out or ROOT / "build" / args.stack, args.stack_file,
                pack_dir=args.policy_pack, pack_config=pack_config, extra=args.extra_resources)


if __name__ == "__main__":
    sys.exit(main())
