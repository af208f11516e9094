#!/usr/bin/env bash
# Builds the Pulumi CLI, the kubernetes provider and a local Kubernetes control plane from the Go module proxy
# into a cache shared by every clone on the machine (docs/real-engine.md, "Where it is built"):
#   $ENGINE_DIR/builds/NAME@ID/   one binary per version, immutable once its checksum is stamped
#   $ENGINE_DIR/sets/KEY/bin/     links to the builds engine/versions.sh names (KEY: that file's sha256)
# A second run builds nothing; a version change builds only what it changes; a binary whose checksum no longer
# matches its stamp (corrupt, or half-written by a build that was killed) is built again.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=engine/versions.sh
. "$here/versions.sh"
ENGINE_DIR=${ENGINE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ascend-npu/engine}
KEY=$(sha256sum "$here/versions.sh" | cut -c1-16)
SET=$ENGINE_DIR/sets/$KEY
BUILDS=$ENGINE_DIR/builds
SRC=$ENGINE_DIR/src
LOGS=$ENGINE_DIR/logs
export GOMODCACHE=$ENGINE_DIR/go/mod GOCACHE=$ENGINE_DIR/go/cache GOPATH=$ENGINE_DIR/go/path
export GOFLAGS=-mod=mod CGO_ENABLED=0 GOTOOLCHAIN=local
# Sets (and the builds only they use) not used by any clone for this many days are removed.
KEEP_DAYS=${ENGINE_KEEP_DAYS:-30}
BUILT=0

say() { printf 'engine: %s\n' "$*"; }

# A module that only requires (and replaces) what it is told, so a main package of another
# module can be built at an exact version.
wrapper_module() {
  local dir=$1 gomod=$2
  mkdir -p "$dir"
  printf 'module ascend-npu.local/engine/%s\n\ngo 1.26\n\n%s\n' "$(basename "${dir%@*}")" "$gomod" >"$dir/go.mod"
  : >"$dir/go.sum"
}

# stamped NAME ID: the build exists and its checksum matches the one recorded when it was built.
stamped() {
  local dir=$BUILDS/$1@$2
  [[ -f $dir/$1.sha256 && -x $dir/$1 ]] && (cd "$dir" && sha256sum --status -c "$1.sha256")
}

# link NAME ID: the set's bin/NAME points at the build (replaced atomically: a running clone never sees none).
link() {
  ln -sfn "../../../builds/$1@$2/$1" "$SET/bin/.$1.new"
  mv -T "$SET/bin/.$1.new" "$SET/bin/$1"
}

# build NAME ID DIR PACKAGE LDFLAGS TAGS: one binary, skipped when it is stamped.
build() {
  local name=$1 id=$2 dir=$3 pkg=$4 ldflags=$5 tags=$6
  local out=$BUILDS/$name@$id log=$LOGS/$name@$id.log
  if stamped "$name" "$id"; then
    say "$name $id: cached"
    link "$name" "$id"
    return 0
  fi
  [[ ! -e $out/$name ]] || say "$name $id: its checksum does not match its stamp: building it again"
  rm -rf "$out" && mkdir -p "$out"
  say "$name $id: building"
  local start=$SECONDS
  if ! (cd "$dir" && go build -trimpath -pgo=off -tags "$tags" -ldflags "-s -w $ldflags" \
        -o "$out/$name.partial" "$pkg") >"$log" 2>&1; then
    say "$name $id: FAILED, last lines of $log:"
    tail -n 15 "$log" >&2
    return 1
  fi
  (cd "$out" && sha256sum "$name.partial" | sed 's/\.partial$//' >"$name.sha256.partial")
  mv -f "$out/$name.partial" "$out/$name"
  mv -f "$out/$name.sha256.partial" "$out/$name.sha256"
  link "$name" "$id"
  BUILT=1
  say "$name $id: built in $((SECONDS - start)) s"
}

build_pulumi() {
  local dir=$SRC/pulumi@$PULUMI_VERSION
  stamped pulumi "$PULUMI_VERSION" || wrapper_module "$dir" "require (
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
  local name=pulumi-resource-kubernetes mod=github.com/pulumi/pulumi-kubernetes/provider/v4
  local id=$PULUMI_KUBERNETES_BUILT_AS-${PULUMI_KUBERNETES_MODULE_VERSION##*-}-sdk$PULUMI_KUBERNETES_SDK_MODULE
  local dir=$SRC/$name@$id
  if ! stamped "$name" "$id"; then
    local origin
    mkdir -p "$SRC"
    origin=$(cd "$SRC" && go mod download -json "$mod@$PULUMI_KUBERNETES_MODULE_VERSION" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
    rm -rf "$dir" && cp -r "$origin" "$dir" && chmod -R u+w "$dir"
    sed -i '/^replace github.com\/pulumi\/pulumi-kubernetes\/sdk\/v4 => /d' "$dir/go.mod"
    # The sdk/v4 release the provider was cut with is not served; the nearest served one above it is.
    sed -i "s#\(github.com/pulumi/pulumi-kubernetes/sdk/v4\) v[0-9.]*#\1 $PULUMI_KUBERNETES_SDK_MODULE#" "$dir/go.mod"
    (cd "$dir/cmd/$name" && VERSION=$PULUMI_KUBERNETES_BUILT_AS go run generate.go) >"$LOGS/$name@$id-generate.log" 2>&1
  fi
  build "$name" "$id" "$dir" "./cmd/$name" "-X $mod/pkg/version.Version=$PULUMI_KUBERNETES_BUILT_AS" ""
}

build_kubernetes() {
  local dir=$SRC/kubernetes@$KUBERNETES_VERSION minor=${KUBERNETES_VERSION#v1.}
  minor=${minor%%.*}
  local staging=v0.${KUBERNETES_VERSION#v1.} replaces="" cmd
  local missing=0
  for cmd in kube-apiserver kube-controller-manager kube-scheduler; do
    stamped "$cmd" "$KUBERNETES_VERSION" || missing=1
  done
  if [[ $missing == 1 ]]; then
    local gomod_file
    mkdir -p "$SRC"
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
  local dir=$SRC/etcd@$ETCD_VERSION
  stamped etcd "$ETCD_VERSION" || wrapper_module "$dir" "require (
	go.etcd.io/etcd/server/v3 $ETCD_VERSION
	go.etcd.io/etcd/api/v3 $ETCD_VERSION
	go.etcd.io/etcd/client/pkg/v3 $ETCD_VERSION
	go.etcd.io/etcd/client/v3 $ETCD_VERSION
	go.etcd.io/etcd/pkg/v3 $ETCD_VERSION
)"
  build etcd "$ETCD_VERSION" "$dir" go.etcd.io/etcd/server/v3 "-X go.etcd.io/etcd/api/v3/version.GitSHA=$ETCD_VERSION" ""
}

# kwok, and its own stage definitions (engine/control_plane.py reads them) beside the binary.
build_kwok() {
  local dir=$SRC/kwok@$KWOK_VERSION out=$BUILDS/kwok@$KWOK_VERSION
  stamped kwok "$KWOK_VERSION" || wrapper_module "$dir" "require sigs.k8s.io/kwok $KWOK_VERSION"
  build kwok "$KWOK_VERSION" "$dir" sigs.k8s.io/kwok/cmd/kwok "-X sigs.k8s.io/kwok/pkg/consts.Version=${KWOK_VERSION#v}" ""
  if [[ ! -f $out/stage/.complete ]]; then
    local module
    module=$(cd "$dir" && go mod download -json "sigs.k8s.io/kwok@$KWOK_VERSION" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
    rm -rf "$out/stage" && cp -r "$module/kustomize/stage" "$out/stage" && chmod -R u+w "$out/stage"
    touch "$out/stage/.complete"
  fi
  ln -sfn "../../builds/kwok@$KWOK_VERSION/stage" "$SET/.kwok-stage.new" && mv -T "$SET/.kwok-stage.new" "$SET/kwok-stage"
}

build_actionlint() {
  local dir=$SRC/actionlint@$ACTIONLINT_VERSION
  stamped actionlint "$ACTIONLINT_VERSION" || wrapper_module "$dir" "require github.com/rhysd/actionlint $ACTIONLINT_VERSION"
  build actionlint "$ACTIONLINT_VERSION" "$dir" github.com/rhysd/actionlint/cmd/actionlint \
    "-X github.com/rhysd/actionlint.version=$ACTIONLINT_VERSION" ""
}

# One build at a time per cache: a second clone waits here, then finds what the first one built.
lock() {
  exec 9>"$ENGINE_DIR/lock"
  flock -n 9 || { say "another build holds $ENGINE_DIR/lock: waiting for it"; flock 9; }
}

# Sets no clone has used for KEEP_DAYS days go, then every build no remaining set links to.
prune() {
  local dir used
  find "$ENGINE_DIR/sets" -mindepth 1 -maxdepth 1 -type d ! -name "$KEY" -mtime +"$KEEP_DAYS" -exec rm -rf {} +
  used=$(find "$ENGINE_DIR/sets" -path '*/bin/*' -type l -printf '%l\n' | sed 's#.*/builds/\([^/]*\)/.*#\1#'
         find "$ENGINE_DIR/sets" -maxdepth 2 -name kwok-stage -type l -printf '%l\n' | sed 's#.*/builds/\([^/]*\)/.*#\1#')
  for dir in "$BUILDS"/*; do
    [[ -e $dir ]] || continue
    grep -qxF "$(basename "$dir")" <<<"$used" || { rm -rf "$dir"; say "removed $(basename "$dir"): no set uses it"; }
  done
}

main() {
  local start=$SECONDS targets=("$@")
  [[ ${#targets[@]} -gt 0 ]] || targets=(pulumi kubernetes_provider etcd kwok kubernetes actionlint)
  mkdir -p "$SET/bin" "$BUILDS" "$LOGS"
  lock
  cp "$here/versions.sh" "$SET/versions.sh"
  touch "$SET"
  for target in "${targets[@]}"; do "build_$target"; done
  # The compile cache is most of the disk (14 GB of 18); with every binary stamped it only speeds a version bump.
  if [[ ${ENGINE_TRIM:-1} == 1 && $BUILT == 1 ]]; then
    go clean -cache
    say "compile cache trimmed (ENGINE_TRIM=0 keeps it)"
  fi
  prune
  say "done in $((SECONDS - start)) s; set $KEY in $SET/bin"
  say "disk: $(du -sh "$ENGINE_DIR" | cut -f1) in $ENGINE_DIR ($(du -sh "$BUILDS" | cut -f1) binaries," \
      "$(du -sh "$GOMODCACHE" 2>/dev/null | cut -f1 || echo 0) module cache," \
      "$(du -sh "$GOCACHE" 2>/dev/null | cut -f1 || echo 0) compile cache)"
}

# Sourced (by the tests of its functions), it only defines them.
if [[ ${BASH_SOURCE[0]} == "$0" ]]; then main "$@"; exit; fi
