"""`make bundle STACK=<stack>`: the listing an air-gapped site needs; `CHECK=<dir>` or `CHECK=site` proves it."""
from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

from components.bundle.check import bundle_problems, chart_problems, file_sha256
from components.bundle.listing import BundleError, digest_warning, listing
from components.bundle.site_check import LOGIN_VARIABLE, SITE, SiteCheckError, site_report
from components.chart.writer import chart_files
from components.config import SpecError
from components.config.invocation import relative, running
from components.config.packages import Packages
from components.plan.stack_files import StackFileError, placeholder_keys
from components.plan.stack_plan import EXIT_CONFIG, EXIT_OK, ROOT, chart_values_text, config_problems, load_config

EXIT_INCOMPLETE = 1
CHECK_HELP = ("prove DIR holds the stack's bundle; `site`: prove the stack's own registry (each image's target, read "
              "with `skopeo inspect` under your `skopeo login` and /etc/containers TLS settings) and package mirror "
              f"({LOGIN_VARIABLE}=user:password for a mirror login) or packages.directory hold it; a directory named "
              "site is checked when written ./site; writes nothing")
README = """# Air-gapped bundle of stack {stack}: docs/air-gapped.md
# images.txt: SOURCE TARGET ARCHIVE per image. On a connected machine, either copy to the site registry:
#   while read -r src dst archive; do skopeo copy --all "docker://$src" "docker://$dst"; done < images.txt
# or write the archives carried across, then prove the directory: make bundle STACK={stack} CHECK=<this directory>
#   while read -r src dst archive; do skopeo copy --all "docker://$src" "oci-archive:$archive:${{dst##*:}}"; done \\
#     < images.txt
# packages.sha256: `sha256sum -c packages.sha256` in this directory, once packages/ holds the installers.
"""


def chart_entry() -> dict:
    """The chart's place in the bundle: Helm names a package `<name>-<version>.tgz`."""
    from components.chart.text_files import CHART_NAME, CHART_VERSION
    return {"file": f"charts/{CHART_NAME}-{CHART_VERSION}.tgz", "version": CHART_VERSION}


def chart_package(out: Path, entry: dict, files: dict[str, str]) -> dict:
    """This release's chart packaged by the Helm engine into OUT/charts/, kept as it is when it holds these files."""
    from components.chart.text_files import CHART_NAME
    from components.chart.writer import package_chart
    target = out / entry["file"]
    if not target.is_file() or chart_problems(out, entry, files):
        with tempfile.TemporaryDirectory() as tmp:
            source = Path(tmp) / CHART_NAME
            for name, text in files.items():
                (source / name).parent.mkdir(parents=True, exist_ok=True)
                (source / name).write_text(text)
            packaged = package_chart(source, Path(tmp) / "dist")
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(packaged, target)
    return {**entry, "sha256": file_sha256(target)}


def image_lines(manifest: dict) -> str:
    """images.txt: `source target archive`, one image a line, as the loops of README.txt read it."""
    return "".join(f"{i['source']} {i['target']} {i['archive']}\n" for i in manifest["images"] if i["carried"])


def build(args: argparse.Namespace) -> dict:
    """The stack planned by the program under mocks, and its listing; SpecError/StackFileError/BundleError."""
    from components.cluster.values_contract import chart_values
    from components.config.config_source import spec_from_values
    from components.plan.stack_plan import run_stack
    config = load_config(args.stack, args.stack_file, placeholder_keys(args.placeholder_secrets))
    try:
        spec = spec_from_values(config.values, config.secret_keys, stack=config.stack)
        resources = run_stack(config)
    except SpecError as exc:
        raise BundleError(config_problems(exc, config)) from exc
    values = chart_values(spec, managed_by="Helm")
    return {"values": values, "spec": spec, "resources": resources}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="make bundle", description=__doc__)
    parser.add_argument("--stack", default="dev", help="stack name: reads Pulumi.<stack>.yaml (default: dev)")
    parser.add_argument("--stack-file", type=Path, help="read this stack file instead of Pulumi.<stack>.yaml")
    parser.add_argument("--out", type=Path, help="bundle directory to write (default: build/<stack>/bundle)")
    parser.add_argument("--check", metavar="DIR|site", help=CHECK_HELP)
    parser.add_argument("--placeholder-secrets", default="", help="as `make plan`: secret keys to plan without")
    args = parser.parse_args(argv)
    with running("make bundle", args.stack, OUT=relative(args.out) if args.out else None, CHECK=args.check):
        return run(args)


def run(args: argparse.Namespace) -> int:
    """The listing written, or a directory or the site checked against it; the exit code."""
    try:
        planned = build(args)
        manifest = listing(args.stack, planned["spec"], planned["values"], planned["resources"], chart_entry())
        if args.check == SITE:
            return site(manifest, planned["spec"].packages)
        files = chart_files()
        if args.check:
            return report(Path(args.check), manifest, files)
        out = args.out or ROOT / "build" / args.stack / "bundle"
        try:
            out.mkdir(parents=True, exist_ok=True)
            manifest["chart"] = chart_package(out, manifest["chart"], files)
            write(out, args.stack, manifest, planned["values"])
        except OSError as exc:
            raise BundleError(f"OUT={out}: cannot write the bundle there ({exc.strerror or exc}); name a directory, "
                              "or a path where one can be made") from exc
    except (StackFileError, BundleError, SiteCheckError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    print(summary(out, manifest))
    warning = digest_warning(planned["values"])
    if warning:
        print(warning, file=sys.stderr)
    return EXIT_OK


def write(out: Path, stack: str, manifest: dict, values: dict) -> None:
    """The listing files beside the chart package; a file whose text is already that is left untouched."""
    texts = {"manifest.json": json.dumps(manifest, indent=1) + "\n", "images.txt": image_lines(manifest),
             "packages.sha256": "".join(f"{p['sha256']}  packages/{p['file']}\n" for p in manifest["packages"]),
             "values.yaml": chart_values_text(stack, values), "README.txt": README.format(stack=stack)}
    for name, text in texts.items():
        path = out / name
        if not path.is_file() or path.read_text() != text:
            path.write_text(text)
    (out / "packages").mkdir(exist_ok=True)
    (out / "images").mkdir(exist_ok=True)


def summary(out: Path, manifest: dict) -> str:
    """What was written, image by image and package by package."""
    lines = [f"bundle of stack {manifest['stack']}: {len(manifest['images'])} images, "
             f"{len(manifest['packages'])} packages, chart {manifest['chart']['version']}, in {relative(out)}/"]
    lines += [f"  image    {i['source']} -> {i['target']}" if i["carried"] else
              f"  image    {i['target']} (already in the site registry: checked there, not carried)"
              for i in manifest["images"]]
    lines += [f"  package  {p['file']} sha256:{p['sha256']}" for p in manifest["packages"]]
    lines.append(f"  chart    {manifest['chart']['file']}")
    return "\n".join(lines)


def report(directory: Path, manifest: dict, chart_files: dict[str, str]) -> int:
    """Print what DIRECTORY lacks; 0 when it holds the whole bundle."""
    if not directory.is_dir():
        print(f"error: CHECK={directory}: not a directory", file=sys.stderr)
        return EXIT_CONFIG
    problems = bundle_problems(directory, manifest, chart_files)
    carried = sum(1 for image in manifest["images"] if image["carried"])
    total = carried + len(manifest["packages"]) + 1
    if problems:
        print(f"bundle {directory}: {len(problems)} of {total} items missing or wrong for stack {manifest['stack']}:",
              file=sys.stderr)
        print("\n".join(f"  - {p}" for p in problems), file=sys.stderr)
        return EXIT_INCOMPLETE
    print(f"bundle {directory}: complete for stack {manifest['stack']}: {carried} images (every blob "
          f"checked), {len(manifest['packages'])} packages (sha256), chart {manifest['chart']['version']}")
    return EXIT_OK


def site(manifest: dict, packages: Packages) -> int:
    """Print what the stack's registry and package source lack; 0 when they hold every image and package."""
    if Path(SITE).is_dir():
        print(f"note: checking the stack's registry and mirror; the directory {SITE}/ is checked with CHECK=./{SITE}")
    lines, problems = site_report(manifest, packages, ROOT)
    print("\n".join(lines))
    total = len(manifest["images"]) + len(manifest["packages"])
    if problems:
        print(f"site of stack {manifest['stack']}: {len(problems)} of {total} items missing or wrong:", file=sys.stderr)
        print("\n".join(f"  - {p}" for p in problems), file=sys.stderr)
        return EXIT_INCOMPLETE
    tag_only = sum(1 for image in manifest["images"] if not image["digest"])
    print(f"site of stack {manifest['stack']}: complete: {len(manifest['images'])} images and "
          f"{len(manifest['packages'])} packages as the stack pins them"
          + (f" ({tag_only} tag-only, by tag alone)" if tag_only else ""))
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
