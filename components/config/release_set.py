"""One MindCluster release per stack: the agents' images and the runtime follow `versions.mindCluster`, and the stack's
CANN and driver stay on that release's compatibility tables, unless an override names the exception with a reason."""
from __future__ import annotations

from typing import Any

from components.config.compatibility import SET_COMPONENTS, ReleaseSet, load_sets
from components.config.compatibility import SET_RULE as RULE
from components.config.problems import Problem

# The agents' config keys and the set component each one is.
AGENTS = {"devicePlugin": "devicePlugin", "exporter": "npuExporter"}


def release_set(versions: Any) -> ReleaseSet:
    """The set `versions.mindCluster` names."""
    return load_sets().get(versions.mind_cluster)


def with_set_images(parsed: dict[str, Any]) -> dict[str, Any]:
    """The parsed sections with each agent whose image the stack leaves unset on its set's own tag."""
    if "versions" not in parsed:
        return parsed
    chosen = release_set(parsed["versions"])
    out = dict(parsed)
    for key, component in AGENTS.items():
        agent = parsed.get(key)
        if agent is not None and "image" not in agent.model_fields_set:
            image = agent.image.model_copy(update={"tag": chosen.component(component)})
            out[key] = agent.model_copy(update={"image": image})
    return out


def _owner(component: str, release: str) -> str:
    owner = load_sets().of_component(component, release)
    return f"MindCluster {owner.release}'s" if owner else "of no catalogued MindCluster release"


def check_versions(versions: Any) -> list[Problem]:
    """CANN and the driver on the set's tables, and its runtime, unless the override names them."""
    chosen, override = release_set(versions), versions.compatibility_override
    problems = []
    problem = chosen.version_problem(versions.driver, versions.cann)
    if problem and override is None:
        problems.append(Problem("versions", f"{problem}; pick versions on those lines or another versions.mindCluster "
                                            f"({', '.join(load_sets().names())}), or name this combination under "
                                            "versions.compatibilityOverride {firmware, driver, cann, reason}"))
    runtime, own = versions.docker_runtime, chosen.component("dockerRuntime")
    named = override.docker_runtime if override else None
    if named is not None and named != runtime:
        problems.append(Problem("versions.compatibilityOverride.dockerRuntime",
                                f"names {named} but the stack deploys Ascend Docker Runtime {runtime}; name the "
                                "deployed one"))
    elif runtime != own and named is None:
        problems.append(Problem("versions.dockerRuntime",
                                f"Ascend Docker Runtime {runtime} is {_owner('dockerRuntime', runtime)}, but "
                                f"versions.mindCluster is {chosen.release}, whose runtime is {own}; {RULE}. Remove "
                                f"versions.dockerRuntime (or write {own}), or keep it under "
                                "versions.compatibilityOverride.dockerRuntime with a reason"))
    return problems


def check_agents(parsed: dict[str, Any]) -> list[Problem]:
    """Each agent's release is its set's, or its `releaseOverride` says why not."""
    chosen = release_set(parsed["versions"])
    problems = []
    for key, component in AGENTS.items():
        agent = parsed.get(key)
        if agent is None or not getattr(agent, "enabled", True) or agent.release_override is not None:
            continue
        release, own = agent.release, chosen.component(component)
        if release != own:
            problems.append(Problem(f"{key}.image.tag",
                                    f"the {SET_COMPONENTS[component]} {release} is {_owner(component, release)}, but "
                                    f"versions.mindCluster is {chosen.release}, whose {SET_COMPONENTS[component]} is "
                                    f"{own}; {RULE}. Remove {key}.image (or write tag: {own}), change "
                                    f"versions.mindCluster, or keep it with {key}.releaseOverride {{tag: {release}, "
                                    f"release: {release}, reason: ...}}"))
    return problems


def check_release_set(parsed: dict[str, Any]) -> list[Problem]:
    """Every release-set problem of the parsed sections (the agents' images already on the set's defaults)."""
    if "versions" not in parsed:
        return []
    return check_versions(parsed["versions"]) + check_agents(parsed)
