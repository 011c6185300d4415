/**
 * apimachinery's TypeMeta, ObjectMeta and ListMeta as effect/Schema, and the shape every stored
 * Kubernetes object has here: a JSON object with `apiVersion`, `kind` and `metadata`, any other
 * fields kept as they are (schema-less, like a custom resource). `metadata.resourceVersion` is the
 * etcd mod revision: set on read, never stored.
 */
import { Schema } from "effect"

const StringMap = Schema.Record({ key: Schema.String, value: Schema.String })

/** metav1.ObjectMeta as a Schema: name, namespace, uid, resourceVersion, labels, annotations, … (other fields kept). */
export const ObjectMeta = Schema.Struct(
  {
    name: Schema.optional(Schema.String),
    generateName: Schema.optional(Schema.String),
    namespace: Schema.optional(Schema.String),
    uid: Schema.optional(Schema.String),
    resourceVersion: Schema.optional(Schema.String),
    generation: Schema.optional(Schema.Number),
    creationTimestamp: Schema.optional(Schema.NullOr(Schema.String)),
    deletionTimestamp: Schema.optional(Schema.NullOr(Schema.String)),
    deletionGracePeriodSeconds: Schema.optional(Schema.NullOr(Schema.Number)),
    labels: Schema.optional(Schema.NullOr(StringMap)),
    annotations: Schema.optional(Schema.NullOr(StringMap)),
    finalizers: Schema.optional(Schema.NullOr(Schema.Array(Schema.String))),
    ownerReferences: Schema.optional(Schema.NullOr(Schema.Array(Schema.Unknown))),
    managedFields: Schema.optional(Schema.NullOr(Schema.Array(Schema.Unknown)))
  },
  Schema.Record({ key: Schema.String, value: Schema.Unknown })
)
/** metav1.ObjectMeta as a value. */
export type ObjectMeta = typeof ObjectMeta.Type

/** A Kubernetes object: TypeMeta + ObjectMeta + whatever else the resource has (spec, data, …). */
export const KubeObject = Schema.Struct(
  {
    apiVersion: Schema.optional(Schema.String),
    kind: Schema.optional(Schema.String),
    metadata: ObjectMeta
  },
  Schema.Record({ key: Schema.String, value: Schema.Unknown })
)
export type KubeObject = typeof KubeObject.Type

/** metav1.ListMeta as a Schema: the list's resourceVersion, continue token and remaining item count. */
export const ListMeta = Schema.Struct({
  resourceVersion: Schema.optional(Schema.String),
  continue: Schema.optional(Schema.String),
  remainingItemCount: Schema.optional(Schema.Number)
})
/** metav1.ListMeta as a value. */
export type ListMeta = typeof ListMeta.Type

/** A list result (`<Kind>List`): the items and the list's resourceVersion / continue token. */
export interface KubeList {
  readonly apiVersion?: string
  readonly kind?: string
  readonly metadata: ListMeta
  readonly items: ReadonlyArray<KubeObject>
}

/** The object's `metadata.labels`, never undefined. */
export const labelsOf = (obj: KubeObject): Readonly<Record<string, string>> => obj.metadata.labels ?? {}

/** A copy of `obj` whose metadata.resourceVersion is `rv` (the versioner's UpdateObject). */
export const withResourceVersion = (obj: KubeObject, rv: bigint | string): KubeObject => ({
  ...obj,
  metadata: { ...obj.metadata, resourceVersion: typeof rv === "string" ? rv : rv.toString() }
})

// ---- the decode fast path ----

const isPlainRecord = (u: unknown): u is Record<string, unknown> =>
  typeof u === "object" && u !== null && !Array.isArray(u)
const optString = (u: unknown) => u === undefined || typeof u === "string"
const optNullString = (u: unknown) => u === undefined || u === null || typeof u === "string"
const optNullNumber = (u: unknown) => u === undefined || u === null || typeof u === "number"
const optNullStringMap = (u: unknown) => {
  if (u === undefined || u === null) return true
  if (!isPlainRecord(u)) return false
  for (const k in u) if (typeof u[k] !== "string") return false
  return true
}
const optNullArray = (u: unknown, item?: (v: unknown) => boolean) => {
  if (u === undefined || u === null) return true
  if (!Array.isArray(u)) return false
  if (item !== undefined) for (const v of u) if (!item(v)) return false
  return true
}

/**
 * `Schema.is(KubeObject)`, written out: the watch path checks every object it decodes, and the
 * generic guard costs more than the JSON.parse before it. test/kubernetes/api/object-meta.test.ts
 * checks that both agree on arbitrary values; the schema stays the definition and explains failures.
 */
export const isKubeObject = (u: unknown): u is KubeObject => {
  if (!isPlainRecord(u)) return false
  if (!optString(u["apiVersion"]) || !optString(u["kind"])) return false
  const m = u["metadata"]
  if (!isPlainRecord(m)) return false
  return (
    optString(m["name"]) &&
    optString(m["generateName"]) &&
    optString(m["namespace"]) &&
    optString(m["uid"]) &&
    optString(m["resourceVersion"]) &&
    (m["generation"] === undefined || typeof m["generation"] === "number") &&
    optNullString(m["creationTimestamp"]) &&
    optNullString(m["deletionTimestamp"]) &&
    optNullNumber(m["deletionGracePeriodSeconds"]) &&
    optNullStringMap(m["labels"]) &&
    optNullStringMap(m["annotations"]) &&
    optNullArray(m["finalizers"], (v) => typeof v === "string") &&
    optNullArray(m["ownerReferences"]) &&
    optNullArray(m["managedFields"])
  )
}
