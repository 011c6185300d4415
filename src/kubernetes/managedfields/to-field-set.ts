/**
 * typed/tofieldset.go: the fields a value sets. A scalar, an atomic list or map, a list item and
 * a map entry that is not a struct field are members; so are null and empty-map values. Items of
 * an associative list seen twice are one member (the duplicate item, nothing below it).
 */
import { FieldSet } from "./field-set.js"
import * as PE from "./path-element.js"
import type { Path } from "./path-element.js"
import type { TypeRef, TypeSchema } from "./type-schema.js"
import { asList, asMap, deduceAtom, fieldType, handleAtom, listItemElement } from "./typed-value.js"
import { isMap, type Json } from "./value.js"

const walk = (
  schema: TypeSchema,
  tr: TypeRef | undefined,
  v: Json,
  path: Array<PE.PathElement>,
  out: FieldSet
): void => {
  handleAtom(deduceAtom(schema.resolve(tr), v), {
    scalar: () => out.insert(path),
    list: (t) => {
      if (t.relationship === "atomic") return out.insert(path)
      const list = asList(v)
      if (list === undefined) return
      const pes = list.map((item) => listItemElement(schema, t, item))
      const seen = new Set<string>()
      const dup = new Set<string>()
      for (const pe of pes) {
        const k = PE.serialize(pe)
        if (seen.has(k) && !dup.has(k)) {
          out.insert([...path, pe])
          dup.add(k)
        }
        seen.add(k)
      }
      pes.forEach((pe, i) => {
        if (dup.has(PE.serialize(pe))) return
        const p = [...path, pe]
        walk(schema, t.elementType, list[i]!, p, out)
        out.insert(p)
      })
    },
    map: (t) => {
      if (t.relationship === "atomic") return out.insert(path)
      const m = asMap(v)
      if (m === undefined) return
      for (const [k, child] of Object.entries(m)) {
        const p = [...path, PE.field(k)]
        walk(schema, fieldType(t, k), child, p, out)
        if (child === null || (isMap(child) && Object.keys(child).length === 0) || !t.fields.has(k)) out.insert(p)
      }
    }
  })
}

/** TypedValue.ToFieldSet; throws ListItemError for a list item without a path element. */
export const toFieldSet = (schema: TypeSchema, tr: TypeRef, v: Json, prefix: Path = []): FieldSet => {
  const out = new FieldSet()
  walk(schema, tr, v, [...prefix], out)
  return out
}
