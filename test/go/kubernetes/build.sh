#!/usr/bin/env bash
# Builds Kubernetes' own kube-apiserver and kube-controller-manager (k8s.io/kubernetes v1.37.2 from
# the Go module proxy, staging modules replaced by their v0.37.2 releases: go.mod) and this module's
# test binaries, and caches them outside the repository:
#
#   $KUBE_BIN_CACHE (default ~/.cache/etcd-effect/kubernetes)/
#     kube-<key>/   kube-apiserver, kube-controller-manager  key: go.mod, go.sum, Go version, this script
#     tests-<key>/  storage.test, scenario.test, faults.test, summarize
#                   key: the same plus every .go file here
#
# A cached entry is reused as it is; a build writes into <dir>.tmp and renames it when complete, so
# an interrupted build is never mistaken for a finished one. Go's own caches (GOMODCACHE, GOCACHE)
# make a rebuild after a source change a matter of seconds.
#
# Prints eval-able lines on stdout (KUBE_APISERVER=…, KUBE_CONTROLLER_MANAGER=…, KUBE_TEST_BIN=…);
# progress and timings go to stderr. Exit 2 when go is missing.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"

if ! command -v go >/dev/null 2>&1; then
  echo "build.sh: go is not installed (Go 1.26 builds Kubernetes' programs here)" >&2
  exit 2
fi

kube_version=v1.37.2
root=${KUBE_BIN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/etcd-effect/kubernetes}
mkdir -p "$root"
# one build at a time on this machine (the bench and the tests may ask together)
exec 9>"$root/.lock"
flock 9

hash_of() { sha256sum | cut -c1-16; }
gover=$(go env GOVERSION)
kube_key=$({ cat go.mod go.sum build.sh; echo "$gover"; } | hash_of)
test_key=$({ echo "$kube_key"; find . -name '*.go' -print0 | sort -z | xargs -0 cat; } | hash_of)
kube_dir=$root/kube-$kube_key
test_dir=$root/tests-$test_key

# the version Kubernetes' own build stamps (hack/lib/version.sh), so /version reports v1.37.2
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X $pkg.gitVersion=$kube_version -X $pkg.gitMajor=1 -X $pkg.gitMinor=37"
  ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
done

timed() { # what, command...
  local start=$SECONDS
  "${@:2}"
  echo "build.sh: $1 in $((SECONDS - start)) s" >&2
}

if [ ! -x "$kube_dir/kube-apiserver" ] || [ ! -x "$kube_dir/kube-controller-manager" ]; then
  echo "build.sh: building kube-apiserver and kube-controller-manager $kube_version into $kube_dir" >&2
  rm -rf "$kube_dir.tmp"
  mkdir -p "$kube_dir.tmp"
  timed "go mod download" go mod download
  timed "go build (kube-apiserver, kube-controller-manager)" \
    go build -ldflags "$ldflags" -o "$kube_dir.tmp/" \
    k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager
  rm -rf "$kube_dir"
  mv "$kube_dir.tmp" "$kube_dir"
fi

if [ ! -x "$test_dir/faults.test" ]; then
  echo "build.sh: building the test binaries into $test_dir" >&2
  rm -rf "$test_dir.tmp"
  mkdir -p "$test_dir.tmp"
  for pkg in storage scenario faults; do
    timed "go test -c ./$pkg" go test -c -o "$test_dir.tmp/$pkg.test" "./$pkg"
  done
  go build -o "$test_dir.tmp/summarize" ./cmd/summarize
  rm -rf "$test_dir"
  mv "$test_dir.tmp" "$test_dir"
fi

# keep the three newest builds of each kind (other worktrees may use other keys)
for kind in kube tests; do
  ls -1dt "$root/$kind"-* 2>/dev/null | grep -v '\.tmp$' | tail -n +4 | xargs -r rm -rf
done

echo "KUBE_APISERVER=$kube_dir/kube-apiserver"
echo "KUBE_CONTROLLER_MANAGER=$kube_dir/kube-controller-manager"
echo "KUBE_TEST_BIN=$test_dir"
