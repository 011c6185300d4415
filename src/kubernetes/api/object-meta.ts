/**
 * apimachinery's TypeMeta, ObjectMeta and ListMeta as effect/Schema, and the shape every stored
 * Kubernetes object has here: a JSON object with `apiVersion`, `kind` and `metadata`, any other
 * fields kept as they are (schema-less, like a custom resource). `metadata.resourceVersion` is the
 * etcd mod revision: set on read, never stored.
 */
import { Schema } from "effect"

const StringMap = Schema.Record({ key: Schema.String, value: Schema.String })

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

export const ListMeta = Schema.Struct({
  resourceVersion: Schema.optional(Schema.String),
  continue: Schema.optional(Schema.String),
  remainingItemCount: Schema.optional(Schema.Number)
})
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
