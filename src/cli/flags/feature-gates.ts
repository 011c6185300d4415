/**
 * etcd 3.6's --feature-gates (Kubernetes' component-base featuregate as etcd sets it up): a
 * comma-separated list of Gate=bool, each gate one etcd knows (the names are case-sensitive, spaces
 * around the parts are trimmed), with etcd's error texts. Of the gates, InitialCorruptCheck changes
 * what one member does (the initial corruption check); the others tune raft, leases' checkpoints
 * between members or bbolt.
 */
import { parseBool, ValueError } from "./go-values.js"

/** etcd 3.6's gates and their defaults */
export const FEATURE_GATES = {
  AllAlpha: false,
  AllBeta: false,
  CompactHashCheck: false,
  InitialCorruptCheck: false,
  LeaseCheckpoint: false,
  LeaseCheckpointPersist: false,
  SetMemberLocalAddr: false,
  StopGRPCServiceOnDefrag: false,
  TxnModeWriteWithSharedBuffer: true
} as const

export type FeatureGate = keyof typeof FEATURE_GATES
export type FeatureGates = Readonly<Partial<Record<FeatureGate, boolean>>>

/** Reads --feature-gates as etcd 3.6 does: the gates set, or etcd's reason. */
export const parseFeatureGates = (text: string): FeatureGates | ValueError => {
  const out: Partial<Record<FeatureGate, boolean>> = {}
  for (const part of text.split(",")) {
    const s = part.trim()
    if (s.length === 0) continue
    const eq = s.indexOf("=")
    const key = (eq < 0 ? s : s.slice(0, eq)).trim()
    if (eq < 0) return new ValueError(`missing bool value for ${key}`)
    const value = s.slice(eq + 1).trim()
    if (!Object.hasOwn(FEATURE_GATES, key)) return new ValueError(`unrecognized feature gate: ${key}`)
    const b = parseBool(value)
    if (b instanceof ValueError) return new ValueError(`invalid value of ${key}=${value}, err: ${b.reason}`)
    out[key as FeatureGate] = b
  }
  return out
}

/** A gate's value: as set, else its default. */
export const gate = (gates: FeatureGates, name: FeatureGate): boolean => gates[name] ?? FEATURE_GATES[name]
