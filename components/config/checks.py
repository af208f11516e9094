"""Checks across sections: packages, versions, the SSH and mirror secrets; every one run by run_checks."""
from __future__ import annotations

from collections import defaultdict
from typing import Any, Optional
from urllib.parse import urlsplit

from components.config.compatibility import load_matrix
from components.config.frameworks import check_frameworks
from components.config.hosts import NodeSpec
from components.config.invocation import current
from components.config.node_checks import check_identity, resolve_nodes
from components.config.packages import (
    CHIP_TOKEN,
    NEEDS_ARCH,
    NEEDS_CHIP,
    VERSION_KEY,
    Kind,
    Source,
    declared_version,
    expected_file_name,
    parse_file_name,
    versions_match,
)
from components.config.problems import Problem
from components.config.release_set import check_release_set
from components.config.validation_images import check_validation_images
from components.releases.catalog import known_releases


def check_package_source(packages) -> list[Problem]:
    """`upload` needs a directory, `mirror` needs a URL, and not the other."""
    if packages.source is Source.UPLOAD and not packages.directory:
        return [Problem("packages.directory", "source is upload; write the local directory holding the files")]
    if packages.source is Source.MIRROR and not packages.mirror_url:
        return [Problem("packages.mirrorUrl", "source is mirror; write the internal https:// URL of the files")]
    return []


def check_package_files(packages, versions) -> list[Problem]:
    """Each file name agrees with its kind, the stack's version, its chip and its arch; one file has one sum."""
    problems: list[Problem] = []
    seen: dict[tuple, int] = {}
    sums: dict[str, int] = {}
    for i, pkg in enumerate(packages.files):
        at = f"packages.files[{i}]"
        version = declared_version(versions, pkg.kind)
        found = parse_file_name(pkg.kind, pkg.file)
        if found is None:
            example = expected_file_name(pkg.kind, version, pkg.chip, pkg.arch)
            problems.append(Problem(f"{at}.file", f"'{pkg.file}' is not a {pkg.kind.value} package name; "
                                                  f"Huawei names it like '{example}'"))
            continue
        first = sums.setdefault(pkg.file, i)
        if packages.files[first].sha256 != pkg.sha256:
            # The file is checked by its sum on the node and listed once in packages.sha256: a second sum would be
            # the one some node's install rejects.
            problems.append(Problem(f"{at}.sha256", f"'{pkg.file}' has another sha256 than packages.files[{first}] "
                                                    f"gives it ({packages.files[first].sha256[:12]}... against "
                                                    f"{pkg.sha256[:12]}...): one file has one sum; write the one "
                                                    "`sha256sum` prints for it in both entries"))
        if not versions_match(version, found["version"]):
            problems.append(Problem(f"{at}.file", f"'{pkg.file}' is version {found['version']} but "
                                                  f"versions.{VERSION_KEY[pkg.kind]} is {version}; use the "
                                                  f"{version} file or change the version"))
        problems += _chip_arch(at, pkg, found)
        slot = (pkg.kind, pkg.chip, pkg.arch)
        if slot in seen:
            problems.append(Problem(f"{at}.file", f"a second {pkg.kind.value} package for the same chip/arch as "
                                                  f"packages.files[{seen[slot]}]; keep one"))
        seen.setdefault(slot, i)
    return problems


def _chip_arch(at: str, pkg, found: dict) -> list[Problem]:
    problems = []
    if pkg.kind in NEEDS_CHIP:
        if pkg.chip is None:
            problems.append(Problem(f"{at}.chip", f"a {pkg.kind.value} package is chip-specific; write the chip "
                                                  f"it is for (the file says {found['chip']})"))
        elif found["chip"] != CHIP_TOKEN[pkg.chip] and not (found["chip"] == "910" and pkg.chip.value == "910B"
                                                            and "-ops_" in pkg.file):
            problems.append(Problem(f"{at}.chip", f"'{pkg.file}' is for chip {found['chip']}, not {pkg.chip.value}"))
    elif pkg.chip is not None:
        problems.append(Problem(f"{at}.chip", f"{pkg.kind.value} packages are the same for every chip; remove chip"))
    if pkg.kind in NEEDS_ARCH:
        if pkg.arch is None:
            problems.append(Problem(f"{at}.arch", f"a {pkg.kind.value} package is arch-specific; write aarch64 or "
                                                  "x86_64"))
        elif found.get("arch") and found["arch"] != pkg.arch.value:
            problems.append(Problem(f"{at}.arch", f"'{pkg.file}' is built for {found['arch']}, not "
                                                  f"{pkg.arch.value}"))
    elif pkg.arch is not None:
        problems.append(Problem(f"{at}.arch", f"{pkg.kind.value} packages are the same for every arch; remove arch"))
    return problems


def check_package_coverage(nodes: list[NodeSpec], packages, versions) -> list[Problem]:
    """Every chip/arch among the nodes has one package of each kind."""
    have = {(p.kind, p.chip, p.arch) for p in packages.files}
    wanted: dict[tuple, list[str]] = defaultdict(list)
    for node in nodes:
        for kind in Kind:
            slot = (kind, node.chip if kind in NEEDS_CHIP else None, node.arch if kind in NEEDS_ARCH else None)
            wanted[slot].append(node.name)
    problems = []
    for (kind, chip, arch), names in wanted.items():
        if (kind, chip, arch) not in have:
            version = declared_version(versions, kind)
            target = " ".join(x for x in (chip.value if chip else "", arch.value if arch else "") if x) or "all"
            problems.append(Problem("packages.files", f"no {kind.value} package for {target} nodes "
                                                      f"({', '.join(names[:3])}{'...' if len(names) > 3 else ''}); "
                                                      f"add {expected_file_name(kind, version, chip, arch)}"))
    return problems


def check_compatibility(versions) -> list[Problem]:
    """The combination is documented, or named by an override with a reason."""
    problem = load_matrix().problem(versions.firmware, versions.driver, versions.cann)
    override = versions.compatibility_override
    if override is not None:
        named = (override.firmware.lower(), override.driver.lower(), override.cann.lower())
        actual = (versions.firmware.lower(), versions.driver.lower(), versions.cann.lower())
        if named != actual:
            return [Problem("versions.compatibilityOverride", f"names firmware/driver/CANN {'/'.join(named)} but "
                                                              f"the stack deploys {'/'.join(actual)}; name the "
                                                              "deployed combination")]
        return []
    if problem:
        return [Problem("versions", f"{problem}; use a documented combination or add "
                                    "versions.compatibilityOverride {firmware, driver, cann, reason}")]
    return []


INSTALLER_KINDS = {"firmware": ("npu-firmware", "firmware"), "driver": ("npu-driver", "driver"),
                   "cann": ("cann", "CANN")}


def catalogued(component: str, version: str) -> Optional[str]:
    """The catalogued release a version is (case aside), or None."""
    return next((r for r in known_releases(component) if r.lower() == version.lower()), None)


def check_installer_releases(versions) -> list[Problem]:
    """Firmware, driver and CANN are catalogued installer releases, or an override names the release each runs as."""
    problems = []
    overrides: dict[str, tuple[int, Any]] = {}
    for i, override in enumerate(versions.release_overrides):
        kind = override.kind.value
        if kind in overrides:
            problems.append(Problem(f"versions.releaseOverrides[{i}].kind", f"a second override of {kind} "
                                    f"(the first is releaseOverrides[{overrides[kind][0]}]); keep one"))
        overrides.setdefault(kind, (i, override))
    for kind, (component, what) in INSTALLER_KINDS.items():
        version, known = getattr(versions, kind), known_releases(component)
        if kind not in overrides:
            if catalogued(component, version) is None:
                problems.append(Problem(f"versions.{kind}", f"{what} {version} is not in the release catalog "
                                        f"(components/releases/{component}.yaml): its installer's flags, exit codes "
                                        f"and records are not known here, and it is not run with another release's. "
                                        f"Write one of {', '.join(known)}, or add versions.releaseOverrides [{{kind: "
                                        f"{kind}, version: {version}, release: <one of those>, reason: ...}}]"))
            continue
        i, override = overrides[kind]
        at = f"versions.releaseOverrides[{i}]"
        if override.version.lower() != version.lower():
            problems.append(Problem(f"{at}.version", f"names {override.version} but versions.{kind} is {version}; "
                                                     "name the deployed version"))
        elif catalogued(component, version) is not None:
            problems.append(Problem(at, f"{what} {version} is catalogued; remove the override"))
        elif catalogued(component, override.release) is None:
            problems.append(Problem(f"{at}.release", f"'{override.release}' is not a catalogued {what} release; "
                                                     f"write one of {', '.join(known)}"))
    return problems


def check_ssh_secret(ssh, has_key: bool, key_is_secret: bool, stack: str = "<stack>") -> list[Problem]:
    """A private key is a Pulumi secret, or the agent is used; not both, not neither."""
    if has_key and not key_is_secret:
        return [Problem("sshPrivateKey", "stored in plain text; remove it and run `pulumi config set --secret "
                                         "sshPrivateKey < ~/.ssh/id_ed25519`")]
    if has_key and ssh.use_agent:
        return [Problem("ssh.useAgent", "true while sshPrivateKey is also set; keep one way to authenticate")]
    if not has_key and not ssh.use_agent:
        offline = current(stack).without("sshPrivateKey")
        return [Problem("sshPrivateKey", f"not set; run `pulumi config set --secret --stack {stack} sshPrivateKey "
                                         "< KEYFILE` or write ssh.useAgent: true"
                                         + (f" (or, before it is set: `{offline}`)" if offline else ""))]
    return []


def check_mirror_credentials(packages, has_login: bool, login_is_secret: bool) -> list[Problem]:
    """The mirror login is a Pulumi secret, and only set for a mirror."""
    if not has_login:
        return []
    if not login_is_secret:
        return [Problem("mirrorCredentials", "stored in plain text; remove it and run `pulumi config set --secret "
                                             "mirrorCredentials 'user:password'`")]
    if packages is not None and packages.source is not Source.MIRROR:
        return [Problem("mirrorCredentials", "set, but packages.source is upload; remove it or use source mirror")]
    url = urlsplit(packages.mirror_url or "") if packages is not None else None
    if url is not None and url.scheme == "http":
        secure = url._replace(scheme="https").geturl()
        return [Problem("packages.mirrorUrl", "http:// with a mirror login (mirrorCredentials): curl on each node "
                                              "would send the user and password across the network in clear text; "
                                              f"use https:// ({secure}) or drop the login "
                                              "(`pulumi config rm mirrorCredentials`)")]
    return []


def run_checks(parsed: dict[str, Any], has_key: bool, key_is_secret: bool, stack: str = "<stack>") -> list[Problem]:
    """Every cross-section check whose sections parsed (STACK: the stack's name, for the commands a problem names)."""
    nodes, problems = resolve_nodes(parsed)
    problems += check_identity(parsed)
    if "ssh" in parsed:
        problems += check_ssh_secret(parsed["ssh"], has_key, key_is_secret, stack)
    if "versions" in parsed:
        problems += check_compatibility(parsed["versions"])
        problems += check_installer_releases(parsed["versions"])
        problems += check_release_set(parsed)
        if "validation" in parsed:
            problems += check_validation_images(parsed["validation"], nodes, parsed["versions"])
        if "frameworks" in parsed:
            problems += check_frameworks(parsed["frameworks"], parsed["versions"])
    if "packages" in parsed:
        problems += check_package_source(parsed["packages"])
        if "versions" in parsed:
            problems += check_package_files(parsed["packages"], parsed["versions"])
            if "nodes" in parsed and "cluster" in parsed:
                problems += check_package_coverage(nodes, parsed["packages"], parsed["versions"])
    return problems
