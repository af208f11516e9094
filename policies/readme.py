"""Write the rules table of policies/README.md from the rules' metadata: `python policies/readme.py [--check]`."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pulumi_policy import StackValidationPolicy

from rules import ALL_POLICIES

HERE = Path(__file__).resolve().parent
README = HERE / "README.md"
BEGIN, END = "<!-- rules-table:begin (make docs) -->", "<!-- rules-table:end -->"


def page_of(rule: str) -> str:
    """A rule's page, beside its module (`rules/image_pinning.md` for `image-pinning`), relative to the pack."""
    return f"rules/{rule.replace('-', '_')}.md"


def row(policy) -> str:
    """One table row: the rule linked to its page, its shipped level, what it judges, its config keys."""
    scope = "stack" if isinstance(policy, StackValidationPolicy) else "resource"
    keys = list(policy.config_schema.properties) if policy.config_schema else []
    config = ", ".join(f"`{key}`" for key in keys) or "none"
    description = policy.description.replace("|", "\\|")
    return (f"| [`{policy.name}`]({page_of(policy.name)}) | {policy.enforcement_level.value} | {scope} "
            f"| {description} | {config} |")


def rules_table(policies=ALL_POLICIES) -> str:
    """The generated part of the README: every rule the pack serves, in the pack's order."""
    head = ["| rule | level | judges | checks | config keys |", "|---|---|---|---|---|"]
    return "\n".join([BEGIN, *head, *(row(p) for p in policies), END])


def render(text: str, policies=ALL_POLICIES) -> str:
    """TEXT with the table between its markers replaced by the current one; refused when a marker is missing."""
    if BEGIN not in text or END not in text:
        raise SystemExit(f"policies/README.md has lost its markers: put back {BEGIN} and {END}")
    head, _, rest = text.partition(BEGIN)
    return head + rules_table(policies) + rest.partition(END)[2]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="exit 1 when the README's table is stale")
    args = parser.parse_args(argv)
    current = README.read_text()
    wanted = render(current)
    if args.check:
        if wanted != current:
            print("policies/README.md's rules table is stale: run `make docs`", file=sys.stderr)
        return int(wanted != current)
    README.write_text(wanted)
    print("wrote policies/README.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
