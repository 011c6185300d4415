/**
 * What a FieldManager is made for (NewDefaultFieldManager's arguments): the resource's type, its
 * group/version/kind, the subresource, and the clock of its managedFields times; and the object
 * shape it works on (JSON with metadata).
 */
import type { Typed } from "./updater.js"
import type { Json } from "./value.js"

export interface GroupVersionKind {
  readonly group: string
  readonly version: string
  readonly kind: string
}

export interface FieldManagerConfig {
  readonly typed: Typed
  readonly gvk: GroupVersionKind
  /** "" for the resource itself, "status" or "scale" for a subresource */
  readonly subresource: string
  /** the time a changed manager gets (RFC 3339, seconds, UTC) */
  readonly now: () => string
}

export type Obj = { metadata?: Record<string, unknown> } & Record<string, Json | undefined>
