/**
 * etcd's checks of the flags that have no effect on one member (embed.Config.Validate and
 * etcdmain's), in its words, so a command line etcd refuses is refused here too; and the warning
 * line naming the ones given (flags/serve-inert-flags.ts says why each changes nothing).
 */
import { type FeatureGate, type FeatureGates, gate } from "./flags/feature-gates.js"
import { ignoredFlagNames, inertReasonOf, inertReasons, type InertReason } from "./flags/serve-inert-flags.js"

/** etcd's maxElectionMs */
const MAX_ELECTION_MS = 50000

/** the cluster flags `serve` reads and checks (../serve.ts checkClusterFlags) but has no use for */
const CHECKED_CLUSTER_FLAGS = ["listen-peer-urls", "initial-cluster", "initial-cluster-state", "initial-cluster-token"]

type Values = Readonly<Record<string, unknown>>

/** etcd's refusal of the inert flags' values, or undefined when etcd takes them. */
export const checkInertFlags = (v: Values, set: ReadonlySet<string>): string | undefined => {
  const tick = v["heartbeat-interval"] as number
  const election = v["election-timeout"] as number
  // embed.Config.Validate's order: the bootstrap conflict before the raft timings
  const bootstrap = [set.has("initial-cluster"), v["discovery"] !== "", v["discovery-srv"] !== ""]
  if (bootstrap.filter((b) => b).length > 1) {
    return 'multiple discovery or bootstrap flags are set. Choose one of "initial-cluster", "discovery" or "discovery-srv"'
  }
  if (tick === 0) return `--heartbeat-interval must be >0 (set to ${tick}ms)`
  if (election === 0) return `--election-timeout must be >0 (set to ${election}ms)`
  if (5 * tick > election) {
    return `--election-timeout[${election}ms] should be at least as 5 times as --heartbeat-interval[${tick}ms]`
  }
  if (election > MAX_ELECTION_MS) {
    return `--election-timeout[${election}ms] is too long, and should be set less than ${MAX_ELECTION_MS}ms`
  }
  for (const name of ["discovery", "discovery-srv"]) {
    if (v[name] !== "") {
      return `--${name}: etcd-effect serve bootstraps its one member alone; use --initial-cluster (or none)`
    }
  }
  return undefined
}

/**
 * The one warning line naming the inert flags given (on the command line, by ETCD_* or the config
 * file) and why they change nothing; undefined when none was.
 */
export const inertFlagsWarning = (set: ReadonlySet<string>): string | undefined => {
  const groups = new Map<InertReason | "ignored", Array<string>>()
  const add = (g: InertReason | "ignored", name: string) => groups.set(g, [...(groups.get(g) ?? []), `--${name}`])
  for (const name of [...set].sort()) {
    if (CHECKED_CLUSTER_FLAGS.includes(name)) add("cluster", name)
    else if ((ignoredFlagNames as ReadonlyArray<string>).includes(name)) add("ignored", name)
    else {
      const g = inertReasonOf(name)
      if (g !== undefined) add(g, name)
    }
  }
  if (groups.size === 0) return undefined
  const parts = [...groups].map(
    ([g, names]) => `${names.join(", ")} (${g === "ignored" ? "no longer supported by etcd either" : inertReasons[g]})`
  )
  return `accepted as etcd's, without effect on this single member: ${parts.join("; ")}`
}

/** etcd 3.6's renamed flags and feature gates that `serve` honours, each read from either name. */
export interface RenamedFlags {
  readonly progressNotifyInterval: number
  readonly corruptCheckTime: number
  readonly initialCorruptCheck: boolean
}

/**
 * etcd 3.6's experimental flags and their new names (or feature gate): either one, not both, in
 * etcd's words when both are given.
 */
export const checkRenamedFlags = (v: Values, set: ReadonlySet<string>): RenamedFlags | string => {
  for (const name of RENAMED) {
    if (set.has(`experimental-${name}`) && set.has(name)) {
      return `cannot set --experimental-${name} and --${name} at the same time, please use --${name} only`
    }
  }
  const pick = <A>(name: string): A => v[set.has(name) ? name : `experimental-${name}`] as A
  const gates = v["feature-gates"] as FeatureGates
  const conflict = experimentalGateConflict(v, set, gates)
  if (conflict !== undefined) return conflict
  const initialCorruptCheck =
    gates.InitialCorruptCheck !== undefined
      ? gate(gates, "InitialCorruptCheck")
      : (v["experimental-initial-corrupt-check"] as boolean)
  return {
    progressNotifyInterval: pick("watch-progress-notify-interval"),
    corruptCheckTime: pick("corrupt-check-time"),
    initialCorruptCheck
  }
}

/** etcd 3.6's experimental flags that became feature gates (features.ExperimentalFlagToFeatureMap) */
const EXPERIMENTAL_GATES: ReadonlyArray<readonly [string, FeatureGate]> = [
  ["experimental-stop-grpc-service-on-defrag", "StopGRPCServiceOnDefrag"],
  ["experimental-initial-corrupt-check", "InitialCorruptCheck"],
  ["experimental-compact-hash-check-enabled", "CompactHashCheck"],
  ["experimental-txn-mode-write-with-shared-buffer", "TxnModeWriteWithSharedBuffer"],
  ["experimental-enable-lease-checkpoint", "LeaseCheckpoint"],
  ["experimental-enable-lease-checkpoint-persist", "LeaseCheckpointPersist"]
]

/**
 * etcd 3.6 refuses an experimental flag given beside --feature-gates whenever the gates' text holds
 * the feature's name, whatever either value says (embed.SetFeatureGatesFromExperimentalFlags tests
 * with strings.Contains, so LeaseCheckpointPersist=… also conflicts with
 * --experimental-enable-lease-checkpoint); the gate's value in the message is the gate's effective one.
 */
const experimentalGateConflict = (v: Values, set: ReadonlySet<string>, gates: FeatureGates): string | undefined => {
  const named = Object.keys(gates).join(",")
  for (const [flag, feature] of EXPERIMENTAL_GATES) {
    if (!set.has(flag) || !named.includes(feature)) continue
    const value = gate(gates, feature)
    return `cannot specify both flags: --${flag}=${v[flag] as boolean} and --feature-gates=${feature}=${value} at the same time, please just use --feature-gates=${feature}=${value}`
  }
  return undefined
}

/** the experimental flags etcd 3.6 renamed that serve reads (`--experimental-<name>` → `--<name>`) */
const RENAMED = [
  "watch-progress-notify-interval",
  "corrupt-check-time",
  "compact-hash-check-time",
  "compaction-batch-limit",
  "compaction-sleep-interval",
  "downgrade-check-time",
  "warning-apply-duration",
  "warning-unary-request-duration",
  "snapshot-catchup-entries",
  "memory-mlock",
  "bootstrap-defrag-threshold-megabytes",
  "peer-skip-client-san-verification",
  "enable-distributed-tracing",
  "distributed-tracing-address",
  "distributed-tracing-service-name",
  "distributed-tracing-instance-id",
  "distributed-tracing-sampling-rate"
]
