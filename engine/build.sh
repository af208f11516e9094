#!/usr/bin/env bash
# Builds the Pulumi CLI, the kubernetes provider and a local Kubernetes control plane from the Go
# module proxy into $ENGINE_DIR/bin, cached by version: a second run builds nothing.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=engine/versions.sh
. "$here/versions.sh"
ENGINE_DIR=${ENGINE_DIR:-$(dirname "$here")/.engine}
BIN=$ENGINE_DIR/bin
SRC=$ENGINE_DIR/src
STAMPS=$ENGINE_DIR/stamps
export GOMODCACHE=$ENGINE_DIR/gomod GOCACHE=$ENGINE_DIR/gocache GOPATH=$ENGINE_DIR/gopath
export GOFLAGS=-mod=mod CGO_ENABLED=0 GOTOOLCHAIN=local
mkdir -p "$BIN" "$SRC" "$STAMPS"

say() { printf 'engine: %s\n' "$*"; }

# A module that only requires (and replaces) what it is told, so a main package of another
# module can be built at an exact version.
wrapper_module() {
  local dir=$1 gomod=$2
  mkdir -p "$dir"
  printf 'module ascend-npu.local/engine/%s\n\ngo 1.26\n\n%s\n' "$(basename "$dir")" "$gomod" >"$dir/go.mod"
  : >"$dir/go.sum"
}

# build NAME VERSION DIR PACKAGE LDFLAGS TAGS: one binary, skipped when its stamp exists.
build() {
  local name=$1 version=$2 dir=$3 pkg=$4 ldflags=$5 tags=$6
  local stamp=$STAMPS/$name@$version log=$ENGINE_DIR/logs/$name.log
  if [[ -f $stamp && -x $BIN/$name ]]; then
    say "$name $version: cached"
    return 0
  fi
  mkdir -p "$ENGINE_DIR/logs"
  say "$name $version: building"
  local start=$SECONDS
  if ! (cd "$dir" && go build -trimpath -pgo=off -tags "$tags" -ldflags "-s -w $ldflags" \
        -o "$BIN/$name.partial" "$pkg") >"$log" 2>&1; then
    say "$name $version: FAILED, last lines of $log:"
    tail -n 15 "$log" >&2
    return 1
  fi
  mv -f "$BIN/$name.partial" "$BIN/$name"
  printf '%s\n' "$version" >"$stamp"
  say "$name $version: built in $((SECONDS - start)) s"
}

build_pulumi() {
  local dir=$SRC/pulumi
  [[ -f $STAMPS/pulumi@$PULUMI_VERSION ]] || wrapper_module "$dir" "require (
	github.com/pulumi/pulumi/pkg/v3 $PULUMI_VERSION
	github.com/pulumi/pulumi/sdk/v3 $PULUMI_VERSION
)

// pkg/v3's own go.mod replaces the clipboard module; replaces do not carry over from a dependency.
replace github.com/atotto/clipboard => github.com/tgummerer/clipboard v0.0.0-20241001131231-d02d263e614e"
  build pulumi "$PULUMI_VERSION" "$dir" github.com/pulumi/pulumi/pkg/v3/cmd/pulumi \
    "-X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=$PULUMI_VERSION" "osusergo grpcnotrace"
}

# The provider's go.mod replaces its sdk/v4 with a sibling folder, and main.go embeds two files that
# `generate.go` writes: build from a writable copy of the module with both fixed.
build_kubernetes_provider() {
  local name=pulumi-resource-kubernetes dir=$SRC/pulumi-resource-kubernetes
  local mod=github.com/pulumi/pulumi-kubernetes/provider/v4
  if [[ ! -f $STAMPS/$name@$PULUMI_KUBERNETES_BUILT_AS ]]; then
    local origin
    origin=$(cd "$SRC" && go mod download -json "$mod@$PULUMI_KUBERNETES_MODULE_VERSION" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
    rm -rf "$dir" && cp -r "$origin" "$dir" && chmod -R u+w "$dir"
    sed -i '/^replace github.com\/pulumi\/pulumi-kubernetes\/sdk\/v4 => /d' "$dir/go.mod"
    # The sdk/v4 release the provider was cut with is not served; the nearest served one above it is.
    sed -i "s#\(github.com/pulumi/pulumi-kubernetes/sdk/v4\) v[0-9.]*#\1 $PULUMI_KUBERNETES_SDK_MODULE#" "$dir/go.mod"
    (cd "$dir/cmd/$name" && VERSION=$PULUMI_KUBERNETES_BUILT_AS go run generate.go) \
      >"$ENGINE_DIR/logs/$name-generate.log" 2>&1
  fi
  build "$name" "$PULUMI_KUBERNETES_BUILT_AS" "$dir" "./cmd/$name" \
    "-X $mod/pkg/version.Version=$PULUMI_KUBERNETES_BUILT_AS" ""
}

build_kubernetes() {
  local dir=$SRC/kubernetes minor=${KUBERNETES_VERSION#v1.}
  minor=${minor%%.*}
  local staging=v0.${KUBERNETES_VERSION#v1.} replaces=""
  if [[ ! -f $STAMPS/kube-scheduler@$KUBERNETES_VERSION ]]; then
    local gomod_file
    gomod_file=$(cd "$SRC" && go mod download -json "k8s.io/kubernetes@$KUBERNETES_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
    # Each staging module the release replaces with a folder, replaced with its published twin.
    # The proxy does not serve every one (sample-cli-plugin): no command imports those, so an empty module
    # of that path stands in for its go.mod.
    while read -r module; do
      if (cd "$SRC" && go mod download "$module@$staging") >/dev/null 2>&1; then
        replaces+="	$module => $module $staging"$'\n'
      else
        mkdir -p "$dir/unserved/${module#k8s.io/}"
        printf 'module %s\n\ngo 1.26\n' "$module" >"$dir/unserved/${module#k8s.io/}/go.mod"
        replaces+="	$module => ./unserved/${module#k8s.io/}"$'\n'
      fi
    done < <(sed -n 's#^\t\(k8s.io/[a-z0-9-]*\) => ./staging/.*#\1#p' "$gomod_file")
    wrapper_module "$dir" "require k8s.io/kubernetes $KUBERNETES_VERSION

replace (
$replaces)"
  fi
  local v=k8s.io/component-base/version
  local ldflags="-X $v.gitVersion=$KUBERNETES_VERSION -X $v.gitMajor=1 -X $v.gitMinor=$minor"
  ldflags+=" -X $v.gitTreeState=clean -X $v.buildDate=1970-01-01T00:00:00Z"
  ldflags+=" -X k8s.io/client-go/pkg/version.gitVersion=$KUBERNETES_VERSION"
  for cmd in kube-apiserver kube-controller-manager kube-scheduler; do
    build "$cmd" "$KUBERNETES_VERSION" "$dir" "k8s.io/kubernetes/cmd/$cmd" "$ldflags" "selinux notest grpcnotrace"
  done
}

build_etcd() {
  local dir=$SRC/etcd
  [[ -f $STAMPS/etcd@$ETCD_VERSION ]] || wrapper_module "$dir" "require (
	go.etcd.io/etcd/server/v3 $ETCD_VERSION
	go.etcd.io/etcd/api/v3 $ETCD_VERSION
	go.etcd.io/etcd/client/pkg/v3 $ETCD_VERSION
	go.etcd.io/etcd/client/v3 $ETCD_VERSION
	go.etcd.io/etcd/pkg/v3 $ETCD_VERSION
)"
  build etcd "$ETCD_VERSION" "$dir" go.etcd.io/etcd/server/v3 \
    "-X go.etcd.io/etcd/api/v3/version.GitSHA=$ETCD_VERSION" ""
}

build_kwok() {
  local dir=$SRC/kwok
  [[ -f $STAMPS/kwok@$KWOK_VERSION ]] || wrapper_module "$dir" "require sigs.k8s.io/kwok $KWOK_VERSION"
  build kwok "$KWOK_VERSION" "$dir" sigs.k8s.io/kwok/cmd/kwok "-X sigs.k8s.io/kwok/pkg/consts.Version=${KWOK_VERSION#v}" ""
}

main() {
  local start=$SECONDS targets=("$@")
  [[ ${#targets[@]} -gt 0 ]] || targets=(pulumi kubernetes_provider etcd kwok kubernetes)
  for target in "${targets[@]}"; do "build_$target"; done
  # The compile cache is most of the disk (14 GB of 18); with every binary stamped it only speeds a version bump.
  if [[ ${ENGINE_TRIM:-0} == 1 ]]; then
    go clean -cache
    say "compile cache trimmed (ENGINE_TRIM=1)"
  fi
  say "done in $((SECONDS - start)) s; $(du -sh "$ENGINE_DIR" | cut -f1) in $ENGINE_DIR"
}

main "$@"
