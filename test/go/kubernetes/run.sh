#!/usr/bin/env bash
# Kubernetes itself on etcd-effect (issue 28), with etcd 3.4 as the control: builds (cached) and
# runs this module's suites, each against both stores —
#   storage   k8s.io/apiserver's storage test suites on an etcd3 store and a cacher (STORE=…)
#   scenario  kube-apiserver + kube-controller-manager driven by kubectl, control vs ours
#   faults    SIGKILL of the store, compaction while watchers lag, an apiserver that stops reading
# then prints a summary (cmd/summarize, known-failures.txt) and exits non-zero on any failure of
# etcd-effect, or any failure of the control not listed as known.
#
#   npm run test:kube-apiserver                  (= bash test/go/kubernetes/run.sh)
#   KUBE_SUITES=storage,scenario STORES=etcd-effect npm run test:kube-apiserver
#
# Needs go, etcd 3.4, kubectl, node and a built repository (npm run build). Without go (or etcd,
# kubectl) it prints why and exits 0, unless REQUIRE_GO=1 (.ci/run sets it): then it fails.
# Logs: $KUBE_TEST_LOGS (default: a new directory under /tmp, printed): each stream's go test output
# (<stream>.out, .json) and every process's log (processes/<test>-<process>.log).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)

unavailable() {
  if [ "${REQUIRE_GO:-}" = "1" ]; then
    echo "test:kube-apiserver: $1 (REQUIRE_GO=1)" >&2
    exit 1
  fi
  echo "test:kube-apiserver: skipped: $1"
  exit 0
}
command -v go >/dev/null 2>&1 || unavailable "go is not installed (Go 1.26 builds kube-apiserver here)"
command -v "${ETCD_BIN:-etcd}" >/dev/null 2>&1 || unavailable "etcd 3.4 is not installed (apt-get install etcd-server)"
command -v "${KUBECTL:-kubectl}" >/dev/null 2>&1 || unavailable "kubectl is not installed"
if [ ! -f "$repo/dist/cli/main.js" ]; then
  echo "test:kube-apiserver: $repo/dist/cli/main.js is missing: run npm run build first" >&2
  exit 1
fi

eval "$("$here/build.sh")"
export KUBE_APISERVER KUBE_CONTROLLER_MANAGER
export ETCD_EFFECT_MAIN="$repo/dist/cli/main.js" REQUIRE_KUBE=1
logs=${KUBE_TEST_LOGS:-$(mktemp -d /tmp/etcd-effect-kube-XXXXXX)}
export KUBE_PROCESS_LOGS=$logs/processes
mkdir -p "$logs"
echo "test:kube-apiserver: logs in $logs"

stores=${STORES:-etcd,etcd-effect}
suites=${KUBE_SUITES:-storage,scenario,faults}
streams=()
status=0

# run <stream> <binary> [env...]: the test binary's verbose output, as go test -json, to <stream>.json
run() {
  local stream=$1 bin=$2
  shift 2
  local file=$logs/${stream//\//-}
  local start=$SECONDS
  echo "test:kube-apiserver: $stream ..."
  set +e
  (cd "$logs" && env "$@" "$bin" -test.v=test2json -test.timeout 45m >"$file.out" 2>&1)
  local rc=$?
  set -e
  go tool test2json -t -p "$stream" <"$file.out" >"$file.json"
  echo "test:kube-apiserver: $stream exit $rc in $((SECONDS - start)) s"
  streams+=("$stream=$file.json")
}

IFS=, read -ra store_list <<<"$stores"
for suite in ${suites//,/ }; do
  case $suite in
    storage)
      for store in "${store_list[@]}"; do
        run "storage/$store" "$KUBE_TEST_BIN/storage.test" STORE="$store"
      done
      ;;
    scenario | faults)
      run "$suite" "$KUBE_TEST_BIN/$suite.test" STORES="$stores"
      ;;
    *)
      echo "test:kube-apiserver: unknown suite $suite (storage, scenario, faults)" >&2
      exit 1
      ;;
  esac
done

# totals for .ci/run: "<passed> <failed> <skipped or known>" in $KUBE_COUNTS (default: in the logs)
(cd "$here" && "$KUBE_TEST_BIN/summarize" -known known-failures.txt -counts "${KUBE_COUNTS:-$logs/counts.txt}" "${streams[@]}") || status=$?
exit "$status"
