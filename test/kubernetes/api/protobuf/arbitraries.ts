/**
 * Random objects in Go's JSON shape (what encoding/json writes for the Go types: omitempty fields
 * absent when zero, pointers present when set, times in RFC 3339 to the second, MicroTime to the
 * microsecond, bytes in base64): ConfigMaps, Secrets, Namespaces, Leases, core and events.k8s.io
 * Events, and their lists.
 */
import { FastCheck as fc } from "effect"

const opt = <A>(arb: fc.Arbitrary<A>) => fc.option(arb, { nil: undefined })
/** drops the keys whose value is undefined (omitempty) */
const clean = (o: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined))
const record = <T extends Record<string, fc.Arbitrary<unknown>>>(fields: T) =>
  fc.record(fields).map((o) => clean(o as Record<string, unknown>))

// "__proto__" is left out: protobufjs' decoder assigns map entries, and that key sets the prototype
const text = fc.string({ minLength: 1, maxLength: 12 }).filter((s) => s !== "__proto__")
const name = fc.stringMatching(/^[a-z]([a-z0-9-]{0,10}[a-z0-9])?$/)
const int32 = fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }).filter((n) => n !== 0)
const int64 = fc.integer({ min: -(2 ** 53) + 1, max: 2 ** 53 - 1 }).filter((n) => n !== 0)
const seconds = fc.integer({ min: -62135596800, max: 253402300799 })
export const time = seconds.map((s) => new Date(s * 1000).toISOString().slice(0, 19) + "Z")
export const microTime = fc
  .tuple(seconds, fc.integer({ min: 0, max: 999_999 }))
  .map(([s, us]) => `${new Date(s * 1000).toISOString().slice(0, 19)}.${String(us).padStart(6, "0")}Z`)
const stringMap = opt(fc.dictionary(text, fc.string({ maxLength: 20 }), { minKeys: 1, maxKeys: 4 }))
const bytesMap = opt(
  fc.dictionary(
    text,
    fc.uint8Array({ maxLength: 20 }).map((b) => Buffer.from(b).toString("base64")),
    {
      minKeys: 1,
      maxKeys: 4
    }
  )
)
const strings = opt(fc.array(text, { minLength: 1, maxLength: 3 }))

const ownerReference = record({
  apiVersion: fc.string({ maxLength: 8 }),
  kind: fc.string({ maxLength: 8 }),
  name: fc.string({ maxLength: 8 }),
  uid: fc.string({ maxLength: 8 }),
  controller: opt(fc.boolean()),
  blockOwnerDeletion: opt(fc.boolean())
})

const managedFieldsEntry = record({
  manager: opt(text),
  operation: opt(fc.constantFrom("Apply", "Update")),
  apiVersion: opt(text),
  time: opt(time),
  fieldsType: opt(fc.constant("FieldsV1")),
  fieldsV1: opt(fc.dictionary(text, fc.constant({}), { maxKeys: 3 })),
  subresource: opt(text)
})

export const objectMeta = record({
  name: opt(name),
  generateName: opt(name),
  namespace: opt(name),
  selfLink: opt(text),
  uid: opt(fc.uuid()),
  resourceVersion: opt(fc.integer({ min: 1 }).map(String)),
  generation: opt(int64),
  creationTimestamp: opt(time),
  deletionTimestamp: opt(time),
  deletionGracePeriodSeconds: opt(fc.integer({ min: 0, max: 1000 })),
  labels: stringMap,
  annotations: stringMap,
  ownerReferences: opt(fc.array(ownerReference, { minLength: 1, maxLength: 2 })),
  finalizers: strings,
  managedFields: opt(fc.array(managedFieldsEntry, { minLength: 1, maxLength: 2 }))
})

const typed = (apiVersion: string, kind: string, fields: Record<string, fc.Arbitrary<unknown>>) =>
  record({ apiVersion: fc.constant(apiVersion), kind: fc.constant(kind), metadata: objectMeta, ...fields })

export const configMap = typed("v1", "ConfigMap", {
  immutable: opt(fc.boolean()),
  data: stringMap,
  binaryData: bytesMap
})

export const secret = typed("v1", "Secret", {
  immutable: opt(fc.boolean()),
  data: bytesMap,
  stringData: stringMap,
  type: opt(text)
})

const namespaceCondition = record({
  type: fc.string({ maxLength: 8 }),
  status: fc.string({ maxLength: 8 }),
  lastTransitionTime: opt(time),
  reason: opt(text),
  message: opt(text)
})

export const namespace = typed("v1", "Namespace", {
  spec: opt(record({ finalizers: strings })),
  status: opt(
    record({
      phase: opt(fc.constantFrom("Active", "Terminating")),
      conditions: opt(fc.array(namespaceCondition, { minLength: 1, maxLength: 2 }))
    })
  )
})

export const lease = typed("coordination.k8s.io/v1", "Lease", {
  spec: opt(
    record({
      holderIdentity: opt(fc.string({ maxLength: 8 })),
      leaseDurationSeconds: opt(fc.integer({ min: 0, max: 3600 })),
      acquireTime: opt(microTime),
      renewTime: opt(microTime),
      leaseTransitions: opt(fc.integer({ min: 0, max: 100 })),
      strategy: opt(fc.constantFrom("OldestEmulationVersion", "")),
      preferredHolder: opt(fc.string({ maxLength: 8 }))
    })
  )
})

const objectReference = record({
  kind: opt(text),
  namespace: opt(name),
  name: opt(name),
  uid: opt(fc.uuid()),
  apiVersion: opt(text),
  resourceVersion: opt(fc.integer({ min: 1 }).map(String)),
  fieldPath: opt(text)
})

export const coreEvent = typed("v1", "Event", {
  involvedObject: objectReference,
  reason: opt(text),
  message: opt(text),
  source: record({ component: opt(text), host: opt(text) }),
  firstTimestamp: fc.option(time, { nil: null }),
  lastTimestamp: fc.option(time, { nil: null }),
  count: opt(int32),
  type: opt(fc.constantFrom("Normal", "Warning")),
  eventTime: fc.option(microTime, { nil: null }),
  series: opt(record({ count: opt(int32), lastObservedTime: opt(microTime) })),
  action: opt(text),
  related: opt(objectReference),
  reportingComponent: fc.string({ maxLength: 8 }),
  reportingInstance: fc.string({ maxLength: 8 })
})

export const eventsEvent = typed("events.k8s.io/v1", "Event", {
  eventTime: fc.option(microTime, { nil: null }),
  series: opt(
    record({ count: fc.integer({ min: 0, max: 100 }), lastObservedTime: fc.option(microTime, { nil: null }) })
  ),
  reportingController: opt(text),
  reportingInstance: opt(text),
  action: opt(text),
  reason: opt(text),
  regarding: objectReference,
  related: opt(objectReference),
  note: opt(text),
  type: opt(fc.constantFrom("Normal", "Warning")),
  deprecatedSource: record({ component: opt(text), host: opt(text) }),
  deprecatedFirstTimestamp: fc.option(time, { nil: null }),
  deprecatedLastTimestamp: fc.option(time, { nil: null }),
  deprecatedCount: opt(int32)
})

/** A list of one kind: items without apiVersion and kind, as the apiserver's lists carry them. */
export const listOf = (apiVersion: string, kind: string, item: fc.Arbitrary<Record<string, unknown>>) =>
  record({
    apiVersion: fc.constant(apiVersion),
    kind: fc.constant(`${kind}List`),
    metadata: record({
      resourceVersion: opt(fc.integer({ min: 1 }).map(String)),
      continue: opt(text),
      remainingItemCount: opt(fc.integer({ min: 0, max: 1000 }))
    }),
    items: fc.array(
      item.map(({ apiVersion: _v, kind: _k, ...rest }) => rest),
      { maxLength: 3 }
    )
  })
