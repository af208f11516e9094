"""`make plan`: run the program offline for one stack, judge it with the policy pack, write build/<stack>/."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from components.plan.stack_files import placeholder_keys
from components.plan.stack_plan import ROOT, plan


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
    parser.add_argument("--placeholder-secrets", default="",
                        help="comma-separated secret keys (sshPrivateKey, mirrorCredentials) to plan with a "
                             "placeholder, for a stack whose secrets are not set yet")
    args = parser.parse_args(argv)
    pack_config = json.loads(args.policy_pack_config.read_text()) if args.policy_pack_config else None
    return plan(args.stack, args.out or ROOT / "build" / args.stack, args.stack_file,
                pack_dir=args.policy_pack, pack_config=pack_config, extra=args.extra_resources,
                placeholders=placeholder_keys(args.placeholder_secrets))


if __name__ == "__main__":
    sys.exit(main())
