#!/usr/bin/env bash
# Builds the Go instruments of bench:compare (issue 29) from the Go module proxy and caches them
# outside the repository:
#
#   etcd-3.6/  etcd 3.6.x (go.etcd.io/etcd/server/v3, the etcd main package) and etcd's own load
#              generator, tools/benchmark (go.etcd.io/etcd/v3/tools/benchmark, served up to 3.6.8)
#   etcd-3.7/  etcd 3.7.x
#
# Each directory is its own module (one module cannot hold two versions of server/v3); the
# versions are the `tool` lines of its go.mod. Binaries go to
#   $ETCD_BENCH_BIN_CACHE (default ~/.cache/etcd-effect/etcd-bench)/<dir>-<key>/
# where key hashes go.mod, go.sum, this script and the Go version. A cached entry is reused as it
# is; a build writes into <entry>.tmp and renames it when complete, so an interrupted build is
# never taken for a finished one. A fresh build (module downloads included) takes ~1.5 min per
# module on 2 cores; with Go's caches warm, seconds.
#
# Prints eval-able lines on stdout: ETCD_36_BIN=…, ETCD_37_BIN=…, ETCD_BENCHMARK_BIN=…; progress
# on stderr. `build.sh 3.6` builds only etcd-3.6/ (the benchmark tool included). Exit 2 without go.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

if ! command -v go >/dev/null 2>&1; then
  echo "benchmarks/go/build.sh: go is not installed (Go 1.26 builds etcd 3.6/3.7 and etcd's benchmark tool)" >&2
  exit 2
fi

root=${ETCD_BENCH_BIN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/etcd-effect/etcd-bench}
mkdir -p "$root"
exec 9>"$root/.lock" # one build at a time: bench runs and tests may ask together
flock 9

gover=$(go env GOVERSION)

# build <module dir> <name=package>...: prints the cache entry's path
build() {
  local dir=$1
  shift
  local key
  key=$(cd "$here/$dir" && { cat go.mod go.sum "$here/build.sh"; echo "$gover"; } | sha256sum | cut -c1-16)
  local out=$root/$dir-$key
  local missing=0 spec
  for spec in "$@"; do [ -x "$out/${spec%%=*}" ] || missing=1; done
  if [ "$missing" = 1 ]; then
    echo "benchmarks/go/build.sh: building $dir into $out" >&2
    rm -rf "$out.tmp"
    mkdir -p "$out.tmp"
    local start=$SECONDS
    (cd "$here/$dir" && go mod download)
    for spec in "$@"; do
      (cd "$here/$dir" && go build -trimpath -ldflags "-s -w" -o "$out.tmp/${spec%%=*}" "${spec#*=}")
    done
    rm -rf "$out"
    mv "$out.tmp" "$out"
    echo "benchmarks/go/build.sh: $dir built in $((SECONDS - start)) s" >&2
  fi
  echo "$out"
}

want=${1:-all}
if [ "$want" = all ] || [ "$want" = 3.6 ]; then
  d36=$(build etcd-3.6 etcd=go.etcd.io/etcd/server/v3 benchmark=go.etcd.io/etcd/v3/tools/benchmark)
  echo "ETCD_36_BIN=$d36/etcd"
  echo "ETCD_BENCHMARK_BIN=$d36/benchmark"
fi
if [ "$want" = all ] || [ "$want" = 3.7 ]; then
  d37=$(build etcd-3.7 etcd=go.etcd.io/etcd/server/v3)
  echo "ETCD_37_BIN=$d37/etcd"
fi
