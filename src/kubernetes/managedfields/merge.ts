/**
 * typed/merge.go with ruleKeepRHS (TypedValue.Merge): the applied configuration (rhs) laid over
 * the live object (lhs). Leaves take the applied value; granular maps merge entry by entry;
 * associative lists merge item by item in an order that keeps the live items' relative order
 * and puts the applied items where the configuration says (visitListItems).
 */
import * as PE from "./path-element.js"
import type { ListType, TypeRef, TypeSchema } from "./type-schema.js"
import { asList, asMap, deduceAtom, fieldType, handleAtom, ListItemError, listItemElement } from "./typed-value.js"
import type { Json } from "./value.js"

type Out = { value: Json } | undefined

const mergeValue = (schema: TypeSchema, tr: TypeRef | undefined, lhs: Json | undefined, rhs: Json | undefined): Out => {
  const atom = schema.resolve(tr)
  const a = rhs === undefined ? deduceAtom(atom, lhs) : deduceAtom(atom, rhs)
  const leaf = (): Out => (rhs !== undefined ? { value: rhs } : lhs !== undefined ? { value: lhs } : undefined)
  return handleAtom<Out>(a, {
    scalar: leaf,
    list: (t) => {
      const l = lhs === undefined ? undefined : asList(lhs)
      const r = rhs === undefined ? undefined : asList(rhs)
      if (t.relationship === "atomic" || ((l?.length ?? 0) === 0 && (r?.length ?? 0) === 0)) return leaf()
      return mergeItems(schema, t, l, r)
    },
    map: (t) => {
      const l = asMap(lhs)
      const r = asMap(rhs)
      const empty = (m: typeof l) => m === undefined || Object.keys(m).length === 0
      if (t.relationship === "atomic" || (empty(l) && empty(r))) return leaf()
      const out: Record<string, Json> = {}
      for (const k of new Set([...Object.keys(l ?? {}), ...Object.keys(r ?? {})])) {
        const o = mergeValue(schema, fieldType(t, k), l?.[k], r?.[k])
        if (o !== undefined) out[k] = o.value
      }
      return Object.keys(out).length > 0 ? { value: out } : undefined
    }
  })
}

interface Indexed {
  readonly pes: Array<PE.PathElement>
  /** each path element's item; null where it appears twice (allowed on the live side only) */
  readonly observed: Map<string, Json>
}

const indexItems = (schema: TypeSchema, t: ListType, list: ReadonlyArray<Json>, allowDuplicates: boolean): Indexed => {
  const observed = new Map<string, Json>()
  const pes: Array<PE.PathElement> = []
  for (const item of list) {
    const pe = listItemElement(schema, t, item)
    const k = PE.serialize(pe)
    if (observed.has(k)) {
      if (!allowDuplicates) throw new ListItemError(`duplicate entries for key ${PE.toString(pe)}`)
      observed.set(k, null)
    } else observed.set(k, item)
    pes.push(pe)
  }
  return { pes, observed }
}

/** mergingWalker.visitListItems */
const mergeItems = (
  schema: TypeSchema,
  t: ListType,
  lhs: ReadonlyArray<Json> | undefined,
  rhs: ReadonlyArray<Json> | undefined
): Out => {
  const R = indexItems(schema, t, rhs ?? [], false)
  const L = indexItems(schema, t, lhs ?? [], true)
  const out: Array<Json> = []
  const key = PE.serialize
  const shared = R.pes.filter((pe) => L.observed.has(key(pe)))
  let next: string | undefined = shared.length > 0 ? key(shared.shift()!) : undefined
  const merged = new Set<string>()
  const item = (l: Json | undefined, r: Json | undefined) => {
    const o = mergeValue(schema, t.elementType, l, r)
    if (o !== undefined) out.push(o.value)
  }
  const advance = () => {
    next = shared.length > 0 ? key(shared.shift()!) : undefined
  }
  let li = 0
  let ri = 0
  while (li < L.pes.length || ri < R.pes.length) {
    if (li < L.pes.length && ri < R.pes.length) {
      const pe = L.pes[li]!
      if (key(pe) === key(R.pes[ri]!)) {
        merged.add(key(pe))
        item(L.observed.get(key(pe)) ?? undefined, R.observed.get(key(pe)))
        li++
        ri++
        advance()
        continue
      }
      if (R.observed.has(key(pe)) && next !== undefined && next !== key(pe)) {
        li++
        continue
      }
    }
    if (li < L.pes.length) {
      const pe = L.pes[li]!
      if (!R.observed.has(key(pe))) {
        item(lhs![li], undefined)
        li++
        continue
      } else if (merged.has(key(pe))) li++
    }
    if (ri < R.pes.length) {
      const pe = R.pes[ri]!
      merged.add(key(pe))
      const l = L.observed.get(key(pe))
      item(l === null && L.observed.has(key(pe)) ? undefined : l, R.observed.get(key(pe)))
      ri++
      if (next !== undefined && next === key(pe)) advance()
    }
  }
  return out.length > 0 ? { value: out } : undefined
}

/** TypedValue.Merge: the live object with the configuration applied; throws ListItemError. */
export const merge = (schema: TypeSchema, tr: TypeRef, live: Json | undefined, config: Json | undefined): Json =>
  mergeValue(schema, tr, live, config)?.value ?? null
