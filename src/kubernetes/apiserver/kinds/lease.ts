/**
 * coordination.k8s.io/v1 Lease: its Go type (every spec field optional, the times MicroTime) and
 * pkg/apis/coordination/validation's ValidateLease / ValidateLeaseUpdate: a positive
 * leaseDurationSeconds, a non-negative leaseTransitions, a known or qualified strategy, and a
 * preferredHolder only with a strategy. Leases have no TTL in storage.
 */
import * as F from "../../api/field.js"
import type { KubeObject } from "../../api/object-meta.js"
import type { FieldError } from "../../api/status.js"
import { isDNS1123Subdomain, isQualifiedName } from "../../api/validation.js"
import { goMicroTime } from "./go-leaves.js"
import { goInt, goString, goStruct, goStructOnly } from "./go-types.js"
import { type MetaRules, ObjectMeta, validateObjectMeta, validateObjectMetaUpdate } from "./object-meta.js"
import type { KindStrategy } from "./strategy.js"

export const Lease = goStructOnly("Lease", "v1.Lease", {
  kind: goString(),
  apiVersion: goString(),
  metadata: ObjectMeta,
  spec: goStruct("LeaseSpec", "v1.LeaseSpec", {
    holderIdentity: goString(),
    leaseDurationSeconds: goInt("int32"),
    acquireTime: goMicroTime,
    renewTime: goMicroTime,
    leaseTransitions: goInt("int32"),
    strategy: goString("v1.CoordinatedLeaseStrategy"),
    preferredHolder: goString()
  })
})

export interface LeaseSpec {
  readonly holderIdentity?: string
  readonly leaseDurationSeconds?: number
  readonly acquireTime?: string
  readonly renewTime?: string
  readonly leaseTransitions?: number
  readonly strategy?: string
  readonly preferredHolder?: string
}

export const leaseSpecOf = (o: KubeObject): LeaseSpec => (o["spec"] ?? {}) as LeaseSpec

const rules: MetaRules = { namespaced: true, validateName: isDNS1123Subdomain, core: false }

/** the strategies a name without "/" may be (validLeaseStrategies) */
const LEASE_STRATEGIES = ["OldestEmulationVersion"]

/** ValidateCoordinatedLeaseStrategy (given the field's path, to which it appends "strategy", as upstream does). */
const validateStrategy = (strategy: string, path: string): Array<FieldError> => {
  const at = `${path}.strategy`
  if (strategy.split("/").length === 1)
    return LEASE_STRATEGIES.includes(strategy) ? [] : [F.notSupported(at, strategy, LEASE_STRATEGIES)]
  return isQualifiedName(strategy).map((m) => F.invalid(at, strategy, m))
}

/** ValidateLeaseSpec */
export const validateLeaseSpec = (spec: LeaseSpec): Array<FieldError> => {
  const errs: Array<FieldError> = []
  if (spec.leaseDurationSeconds !== undefined && spec.leaseDurationSeconds <= 0)
    errs.push(F.invalid("spec.leaseDurationSeconds", spec.leaseDurationSeconds, "must be greater than 0"))
  if (spec.leaseTransitions !== undefined && spec.leaseTransitions < 0)
    errs.push(F.invalid("spec.leaseTransitions", spec.leaseTransitions, "must be greater than or equal to 0"))
  if (spec.strategy !== undefined) errs.push(...validateStrategy(spec.strategy, "spec.strategy"))
  if ((spec.preferredHolder ?? "") !== "" && (spec.strategy ?? "") === "")
    errs.push(F.forbidden("spec.preferredHolder", "may only be specified if `strategy` is defined"))
  return errs
}

export const leaseStrategy: KindStrategy = {
  schema: Lease,
  core: false,
  returnDeletedObject: false,
  validate: (obj) => [...validateObjectMeta(obj.metadata, rules), ...validateLeaseSpec(leaseSpecOf(obj))],
  validateUpdate: (obj, old) => [
    ...validateObjectMetaUpdate(obj.metadata, old.metadata, rules),
    ...validateLeaseSpec(leaseSpecOf(obj))
  ]
}
