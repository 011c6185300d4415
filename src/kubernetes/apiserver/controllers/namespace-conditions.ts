/**
 * pkg/controller/namespace/deletion/status_condition_utils.go: the five conditions the namespace
 * controller keeps on a terminating namespace, each in its failing or its "ok" form, written on
 * every pass; lastTransitionTime changes only when a condition's status flips.
 */
import { timestamp } from "../write/defaulting.js"

export interface Condition {
  type: string
  status: "True" | "False"
  lastTransitionTime: string
  reason: string
  message: string
}

const TYPES = [
  "NamespaceDeletionDiscoveryFailure",
  "NamespaceDeletionGroupVersionParsingFailure",
  "NamespaceDeletionContentFailure",
  "NamespaceContentRemaining",
  "NamespaceFinalizersRemaining"
] as const

const OK: Record<(typeof TYPES)[number], [reason: string, message: string]> = {
  NamespaceDeletionDiscoveryFailure: ["ResourcesDiscovered", "All resources successfully discovered"],
  NamespaceDeletionGroupVersionParsingFailure: ["ParsedGroupVersions", "All legacy kube types successfully parsed"],
  NamespaceDeletionContentFailure: [
    "ContentDeleted",
    "All content successfully deleted, may be waiting on finalization"
  ],
  NamespaceContentRemaining: ["ContentRemoved", "All content successfully removed"],
  NamespaceFinalizersRemaining: ["ContentHasNoFinalizers", "All content-preserving finalizers finished"]
}

/** What one pass found: errors deleting content, and what remains (by resource and by finalizer). */
export interface DeletionTotals {
  readonly deleteErrors: ReadonlyArray<string>
  /** "<resource>.<group>" → remaining objects */
  readonly remaining: ReadonlyMap<string, number>
  /** finalizer → objects carrying it */
  readonly finalizers: ReadonlyMap<string, number>
}

const failing = (t: DeletionTotals): Map<string, [string, string]> => {
  const out = new Map<string, [string, string]>()
  if (t.deleteErrors.length > 0) {
    const msgs = [...t.deleteErrors].sort()
    out.set("NamespaceDeletionContentFailure", [
      "ContentDeletionFailed",
      `Failed to delete all resource types, ${msgs.length} remaining: ${msgs.join(", ")}`
    ])
  }
  const res = [...t.remaining]
    .filter(([, n]) => n > 0)
    .map(([gr, n]) => `${gr} has ${n} resource instances`)
    .sort()
  if (res.length > 0)
    out.set("NamespaceContentRemaining", ["SomeResourcesRemain", `Some resources are remaining: ${res.join(", ")}`])
  const fins = [...t.finalizers]
    .filter(([, n]) => n > 0)
    .map(([f, n]) => `${f} in ${n} resource instances`)
    .sort()
  if (fins.length > 0)
    out.set("NamespaceFinalizersRemaining", [
      "SomeFinalizersRemain",
      `Some content in the namespace has finalizers remaining: ${fins.join(", ")}`
    ])
  return out
}

/** updateConditions: the namespace's conditions after this pass (a new array; the old one untouched). */
export const updatedConditions = (
  old: ReadonlyArray<Record<string, unknown>>,
  totals: DeletionTotals
): Array<Record<string, unknown>> => {
  const now = timestamp()
  const bad = failing(totals)
  const out = old.map((c) => ({ ...c }))
  for (const type of TYPES) {
    const [reason, message] = bad.get(type) ?? OK[type]
    const status = bad.has(type) ? "True" : "False"
    const cur = out.find((c) => c["type"] === type)
    if (cur === undefined) out.push({ type, status, lastTransitionTime: now, reason, message })
    else if (cur["status"] !== status || cur["reason"] !== reason || cur["message"] !== message) {
      if (cur["status"] !== status) cur["lastTransitionTime"] = now
      Object.assign(cur, { status, reason, message })
    }
  }
  return out
}
