# Versions of the real engine and control plane that `make engine` builds from the Go module proxy.
# Sourced by engine/build.sh and engine/cluster.sh; one line per module, nothing else.

# The CLI: the nearest release at or above the `pulumi` SDK pinned in requirements.txt (3.272.0)
# that the module proxy serves (3.272.0 and 3.273.0 are not served).
PULUMI_VERSION=v3.274.0
# The kubernetes provider: the proxy serves provider/v4 only as this pseudo-version (the v4.25.0
# release); it is registered in the plugin cache under the version the pulumi-kubernetes SDK asks for.
PULUMI_KUBERNETES_MODULE_VERSION=v4.0.0-20260115033456-f47bc2d6f199
PULUMI_KUBERNETES_BUILT_AS=4.25.0
# provider/go.mod replaces sdk/v4 with its sibling folder: the sdk/v4 module of the same release instead.
PULUMI_KUBERNETES_SDK_MODULE=v4.25.0
# The control plane: Kubernetes and the etcd minor its client pins (go.mod: etcd/client/v3 v3.6.8).
KUBERNETES_VERSION=v1.36.3
ETCD_VERSION=v3.6.16
KWOK_VERSION=v0.8.0
# The workflows' linter, run by `make actionlint` (and .ci/run) on .github/workflows.
ACTIONLINT_VERSION=v1.7.12
