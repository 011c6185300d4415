/**
 * typed/remove.go (RemoveItems): the value without the paths of a set. A path in the set goes
 * with everything below it; a set's paths below an element are removed inside it. As in Go, a
 * map or list the walk enters and leaves empty (or enters while atomic or not of its kind)
 * becomes null.
 */
import type { FieldSet } from "./field-set.js"
import * as PE from "./path-element.js"
import type { TypeRef, TypeSchema } from "./type-schema.js"
import { deduceAtom, fieldType, handleAtom, listItemElement } from "./typed-value.js"
import { isList, isMap, type Json } from "./value.js"

const removeValue = (schema: TypeSchema, tr: TypeRef | undefined, v: Json, toRemove: FieldSet): Json =>
  handleAtom<Json>(deduceAtom(schema.resolve(tr), v), {
    scalar: () => v,
    list: (t) => {
      if (!isList(v) || v.length === 0 || t.relationship === "atomic") return null
      const out: Array<Json> = []
      for (const item of v) {
        const pe = listItemElement(schema, t, item)
        if (toRemove.has([pe])) continue
        const sub = toRemove.withPrefix(pe)
        out.push(sub.isEmpty() ? item : removeValue(schema, t.elementType, item, sub))
      }
      return out.length > 0 ? out : null
    },
    map: (t) => {
      if (!isMap(v) || Object.keys(v).length === 0 || t.relationship === "atomic") return null
      const out: Record<string, Json> = {}
      for (const [k, child] of Object.entries(v)) {
        const pe = PE.field(k)
        if (toRemove.has([pe])) continue
        const sub = toRemove.withPrefix(pe)
        out[k] = sub.isEmpty() ? child : removeValue(schema, fieldType(t, k), child, sub)
      }
      return Object.keys(out).length > 0 ? out : null
    }
  })

/** TypedValue.RemoveItems */
export const removeItems = (schema: TypeSchema, tr: TypeRef, v: Json, toRemove: FieldSet): Json =>
  removeValue(schema, tr, v, toRemove)
