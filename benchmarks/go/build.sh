#!/usr/bin/env bash
# Builds the Go instruments of bench:compare (issue 29) from the Go module proxy and caches them
# outside the repository:
#
#   etcd-3.6/  etcd 3.6.x (go.etcd.io/etcd/server/v3, the etcd main package) and etcd's own load
#              generator, tools/benchmark (go.etcd.io/etcd/v3/tools/benchmark, served up to 3.6.8);
#              etcdutl and etcdctl 3.6 and bbolt's own CLI (issue 41: the snapshot oracles)
#   etcd-3.7/  etcd 3.7.x
#   kube-client/  bench:kube-compare's load client (watchers, updates, LISTs, a client-go informer)
#
# Each directory is its own module (one module cannot hold two versions of server/v3); the
# versions are the `tool` lines of its go.mod. Binaries go to
#   $ETCD_BENCH_BIN_CACHE (default ~/.cache/etcd-effect/etcd-bench)/<dir>-<key>/
# where key hashes go.mod, go.sum, the module's own .go files, the build flags, the programs and
# the Go version. A cached entry is reused as it is; a build writes into <entry>.tmp and renames
# it when complete, so an interrupted build is never taken for a finished one. A fresh build
# (module downloads included) took 7 min for etcd-3.6/, 1.7 min for etcd-3.7/ and 8 min for
# kube-client/ on 2 cores at load 11–16 (~1.5 min each on a quiet machine); with Go's build cache
# warm, seconds.
#
# Prints eval-able lines on stdout: ETCD_36_BIN=…, ETCD_37_BIN=…, ETCD_BENCHMARK_BIN=…,
# ETCDUTL_36_BIN=…, ETCDCTL_36_BIN=…, BBOLT_BIN=…,
# KUBE_CLIENT_BIN=…; progress on stderr. `build.sh 3.6` builds only etcd-3.6/ (the benchmark tool
# included), `build.sh 3.7` and `build.sh kube-client` theirs (several may be named); `build.sh
# --cached` builds nothing and prints only what is already built, without waiting for a build under
# way (tests use it). Exit 2 without go.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

if ! command -v go >/dev/null 2>&1; then
  echo "benchmarks/go/build.sh: go is not installed (Go 1.26 builds etcd 3.6/3.7 and etcd's benchmark tool)" >&2
  exit 2
fi

root=${ETCD_BENCH_BIN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/etcd-effect/etcd-bench}
mkdir -p "$root"

gover=$(go env GOVERSION)
flags=(-trimpath -ldflags "-s -w")

# build <module dir> <name=package>...: prints the cache entry's path
build() {
  local dir=$1
  shift
  local key
  key=$(cd "$here/$dir" && { cat go.mod go.sum ./*.go 2>/dev/null; echo "$gover ${flags[*]} $*"; } | sha256sum | cut -c1-16)
  local out=$root/$dir-$key
  local missing=0 spec
  for spec in "$@"; do [ -x "$out/${spec%%=*}" ] || missing=1; done
  if [ "$missing" = 1 ] && [ "$cached_only" = 1 ]; then
    return 1
  fi
  if [ "$missing" = 1 ]; then
    echo "benchmarks/go/build.sh: building $dir into $out" >&2
    rm -rf "$out.tmp"
    mkdir -p "$out.tmp"
    local start=$SECONDS
    (cd "$here/$dir" && go mod download)
    for spec in "$@"; do
      (cd "$here/$dir" && go build "${flags[@]}" -o "$out.tmp/${spec%%=*}" "${spec#*=}")
    done
    rm -rf "$out"
    mv "$out.tmp" "$out"
    echo "benchmarks/go/build.sh: $dir built in $((SECONDS - start)) s" >&2
  fi
  echo "$out"
}

cached_only=0
wanted=" ${*:-all} "
if [ "$wanted" = " --cached " ]; then
  cached_only=1
  wanted=" all "
fi
# wants TARGET: TARGET or all was asked for (`build.sh 3.6 3.7` builds both)
wants() { [[ "$wanted" == *" all "* || "$wanted" == *" $1 "* ]]; }
if [ "$cached_only" = 0 ]; then
  # one build at a time: bench runs may ask together. --cached takes no lock: an entry appears
  # complete (renamed from .tmp) or not at all, so it never waits behind a build of minutes
  exec 9>"$root/.lock"
  flock 9
fi
if wants 3.6; then
  if d36=$(build etcd-3.6 etcd=go.etcd.io/etcd/server/v3 benchmark=go.etcd.io/etcd/v3/tools/benchmark \
    etcdutl=go.etcd.io/etcd/etcdutl/v3 etcdctl=go.etcd.io/etcd/etcdctl/v3 bbolt=go.etcd.io/bbolt/cmd/bbolt); then
    echo "ETCD_36_BIN=$d36/etcd"
    echo "ETCD_BENCHMARK_BIN=$d36/benchmark"
    echo "ETCDUTL_36_BIN=$d36/etcdutl"
    echo "ETCDCTL_36_BIN=$d36/etcdctl"
    echo "BBOLT_BIN=$d36/bbolt"
  fi
fi
if wants 3.7; then
  if d37=$(build etcd-3.7 etcd=go.etcd.io/etcd/server/v3); then
    echo "ETCD_37_BIN=$d37/etcd"
  fi
fi
if wants kube-client; then
  if dk=$(build kube-client kube-client=.); then
    echo "KUBE_CLIENT_BIN=$dk/kube-client"
  fi
fi
