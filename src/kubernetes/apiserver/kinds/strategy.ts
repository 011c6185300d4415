/**
 * rest.RESTCreateStrategy / RESTUpdateStrategy / RESTDeleteStrategy of one kind, as the write
 * pipeline (apiserver/write/) uses it: the Go type bodies decode into, defaulting, what a create or
 * update may not set, validation on create and update, and how deletion behaves. Built-in kinds
 * live beside this file; custom resources get theirs from their CRD (custom.ts).
 */
import type { KubeObject } from "../../api/object-meta.js"
import type { FieldError } from "../../api/status.js"
import type { GoSchema } from "./go-types.js"
import type { MutableMeta } from "./object-meta.js"

/** A body as the pipeline passes it between stages: a JSON object, mutable. */
export type Obj = Record<string, unknown> & { metadata: MutableMeta }

export interface KindStrategy {
  /** the kind's Go type: bodies are decoded with it (unknown fields are the strict decoder's) */
  readonly schema: GoSchema
  /**
   * The decoder's schema coercion after the Go type (a custom resource's pruning): mutates the
   * object, returns the pruned paths, which the strict decoder reports as unknown fields
   */
  readonly coerce?: ((obj: Obj) => ReadonlyArray<string>) | undefined
  /** SetDefaults_<Kind> and the conversion's side effects (a Secret's stringData) */
  readonly defaults?: ((obj: Obj) => void) | undefined
  /** PrepareForCreate: fields a create may not set (a namespace's status) */
  readonly prepareForCreate?: ((obj: Obj) => void) | undefined
  /** PrepareForUpdate: fields an update of the main resource may not change */
  readonly prepareForUpdate?: ((obj: Obj, old: KubeObject) => void) | undefined
  /** whether an update changes the generation (default: anything but metadata and status differs) */
  readonly generationChanged?: ((obj: Obj, old: KubeObject) => boolean) | undefined
  /** Validate (create), metadata included */
  readonly validate: (obj: Obj) => ReadonlyArray<FieldError>
  /** ValidateUpdate, metadata included */
  readonly validateUpdate: (obj: Obj, old: KubeObject) => ReadonlyArray<FieldError>
  /** core kinds check finalizer names against the standard ones */
  readonly core: boolean
  /** Store.ReturnDeletedObject: a DELETE that removes answers with the object, not a Status */
  readonly returnDeletedObject: boolean
  /** DefaultGarbageCollectionPolicy Unsupported (events): a delete never adds orphan/foregroundDeletion */
  readonly garbageCollectionUnsupported?: boolean | undefined
  /** ShouldDeleteDuringUpdate's extra condition (namespaces: spec.finalizers empty too) */
  readonly deleteDuringUpdate?: ((obj: Obj) => boolean) | undefined
}
