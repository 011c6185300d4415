/**
 * typed/compare.go: what changed between two values of a type, as three FieldSets — added,
 * modified, removed. A leaf (scalar, atomic list or map, or an empty one) is compared whole; a
 * granular map by entry; an associative list by item path element (an item seen twice on one side
 * is compared as the group). A map or list that appears or disappears is itself added or removed.
 */
import type { FieldSet } from "./field-set.js"
import { FieldSet as Set_ } from "./field-set.js"
import * as PE from "./path-element.js"
import type { PathElement } from "./path-element.js"
import type { TypeRef, TypeSchema } from "./type-schema.js"
import { asList, asMap, deduceAtom, fieldType, handleAtom, listItemElement } from "./typed-value.js"
import { equalValues, type Json } from "./value.js"

export interface Comparison {
  readonly added: FieldSet
  readonly modified: FieldSet
  readonly removed: FieldSet
}

class Walker {
  inLeaf = false
  constructor(
    readonly schema: TypeSchema,
    readonly c: Comparison,
    readonly path: Array<PathElement>,
    readonly lhs: Json | undefined,
    readonly rhs: Json | undefined
  ) {}

  compare(tr: TypeRef | undefined): void {
    const atom = this.schema.resolve(tr)
    const al = deduceAtom(atom, this.lhs)
    const ar = deduceAtom(atom, this.rhs)
    if (this.rhs === undefined) this.handle(al)
    else if (this.lhs === undefined || sameAtom(al, ar)) this.handle(ar)
    else {
      const w2 = new Walker(this.schema, this.c, this.path, this.lhs, this.rhs)
      w2.handle(al)
      this.handle(ar)
    }
    if (!this.inLeaf) {
      if (this.lhs === undefined) this.c.added.insert(this.path)
      else if (this.rhs === undefined) this.c.removed.insert(this.path)
    }
  }

  leaf(): void {
    if (this.inLeaf) return
    this.inLeaf = true
    if (this.lhs === undefined) this.c.added.insert(this.path)
    else if (this.rhs === undefined) this.c.removed.insert(this.path)
    else if (!equalValues(this.lhs, this.rhs)) this.c.modified.insert(this.path)
  }

  descend(pe: PathElement, tr: TypeRef | undefined, lhs: Json | undefined, rhs: Json | undefined): void {
    new Walker(this.schema, this.c, [...this.path, pe], lhs, rhs).compare(tr)
  }

  handle(a: Parameters<typeof handleAtom>[0]): void {
    handleAtom(a, {
      scalar: () => this.leaf(),
      list: (t) => {
        const l = this.lhs === undefined ? undefined : asList(this.lhs)
        const r = this.rhs === undefined ? undefined : asList(this.rhs)
        if (t.relationship === "atomic" || ((l?.length ?? 0) === 0 && (r?.length ?? 0) === 0)) return this.leaf()
        this.items(t, l ?? [], r ?? [])
      },
      map: (t) => {
        const l = asMap(this.lhs)
        const r = asMap(this.rhs)
        const empty = (m: typeof l) => m === undefined || Object.keys(m).length === 0
        if (t.relationship === "atomic" || (empty(l) && empty(r))) return this.leaf()
        const keys = new Set([...Object.keys(l ?? {}), ...Object.keys(r ?? {})])
        for (const k of keys) this.descend(PE.field(k), fieldType(t, k), l?.[k], r?.[k])
      }
    })
  }

  items(t: Parameters<typeof listItemElement>[1], lhs: ReadonlyArray<Json>, rhs: ReadonlyArray<Json>): void {
    const groups = new Map<string, { pe: PathElement; l: Array<Json>; r: Array<Json> }>()
    const group = (item: Json) => {
      const pe = listItemElement(this.schema, t, item)
      const k = PE.serialize(pe)
      let g = groups.get(k)
      if (g === undefined) groups.set(k, (g = { pe, l: [], r: [] }))
      return g
    }
    for (const item of lhs) group(item).l.push(item)
    for (const item of rhs) group(item).r.push(item)
    for (const { pe, l, r } of groups.values()) {
      const p = [...this.path, pe]
      if (l.length <= 1 && r.length <= 1) this.descend(pe, t.elementType, l[0], r[0])
      else if (l.length >= 2 && r.length >= 2) {
        if (l.length !== r.length || l.some((x, i) => !equalValues(x, r[i]))) this.c.modified.insert(p)
      } else if (l.length >= 2) {
        if (r.length !== 0) this.descend(pe, t.elementType, undefined, r[0])
        this.c.removed.insert(p)
      } else {
        if (l.length !== 0) this.descend(pe, t.elementType, l[0], undefined)
        this.c.added.insert(p)
      }
    }
  }
}

const sameAtom = (a: Parameters<typeof handleAtom>[0], b: Parameters<typeof handleAtom>[0]): boolean =>
  a.map === b.map && a.list === b.list && (a.scalar === true) === (b.scalar === true)

/** TypedValue.Compare(lhs → rhs) */
export const compare = (schema: TypeSchema, tr: TypeRef, lhs: Json | undefined, rhs: Json | undefined): Comparison => {
  const c: Comparison = { added: new Set_(), modified: new Set_(), removed: new Set_() }
  new Walker(schema, c, [], lhs, rhs).compare(tr)
  return c
}
