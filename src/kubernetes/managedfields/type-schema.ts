/**
 * structured-merge-diff's schema: what server-side apply knows of a type — a scalar, a list
 * (atomic, or associative: a set, or a map keyed by some fields of its items) or a map (atomic,
 * or granular: struct fields and/or entries of an element type) — and its conversion from OpenAPI
 * v2 definitions as kube-openapi's schemaconv does it (x-kubernetes-list-type, -list-map-keys,
 * -map-type, and for built-in types without a list type, x-kubernetes-patch-strategy/merge-key).
 * A type with no `type` can be any of the three; "deduced" is the type of unknown content
 * (preserved unknown fields, metadata-less maps): maps granular, lists atomic.
 */
import type { Json } from "./value.js"

export type Relationship = "atomic" | "associative" | "separable" | ""

export type TypeRef =
  { readonly named: string; readonly relationship?: Relationship | undefined } | { readonly inlined: Atom }

export interface ListType {
  readonly elementType: TypeRef
  readonly relationship: Relationship
  readonly keys: ReadonlyArray<string>
}

export interface MapType {
  readonly fields: ReadonlyMap<string, { readonly type: TypeRef; readonly default?: Json | undefined }>
  /** undefined: no other keys are allowed */
  readonly elementType: TypeRef | undefined
  readonly relationship: Relationship
}

export interface Atom {
  readonly scalar?: boolean | undefined
  readonly list?: ListType | undefined
  readonly map?: MapType | undefined
}

export const UNTYPED = "__untyped_atomic_"
export const DEDUCED = "__untyped_deduced_"

const untyped: Atom = {
  scalar: true,
  list: { elementType: { named: UNTYPED }, relationship: "atomic", keys: [] },
  map: { fields: new Map(), elementType: { named: UNTYPED }, relationship: "atomic" }
}
const deduced: Atom = {
  scalar: true,
  list: { elementType: { named: UNTYPED }, relationship: "atomic", keys: [] },
  map: { fields: new Map(), elementType: { named: DEDUCED }, relationship: "separable" }
}

export class TypeSchema {
  constructor(readonly types: ReadonlyMap<string, Atom>) {}

  /** Schema.Resolve: the atom of a reference, with the reference's relationship on its map or list */
  resolve(tr: TypeRef | undefined): Atom {
    if (tr === undefined) return deduced
    if ("inlined" in tr) return tr.inlined
    const a = tr.named === DEDUCED ? deduced : tr.named === UNTYPED ? untyped : this.types.get(tr.named)
    if (a === undefined) return deduced
    const r = tr.relationship
    if (r === undefined || r === "") return a
    return {
      ...a,
      map: a.map === undefined ? undefined : { ...a.map, relationship: r },
      list: a.list === undefined ? undefined : { ...a.list, relationship: r }
    }
  }
}
