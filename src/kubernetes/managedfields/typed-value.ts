/**
 * What the walkers of typed/ share (helpers.go): the atom a value takes of its type
 * (deduceAtom), the path element of a list item (a key of its key fields, or the item itself
 * for a set), and the walk's dispatch (handleAtom: map, then scalar, then list).
 */
import * as PE from "./path-element.js"
import type { PathElement } from "./path-element.js"
import type { Atom, ListType, MapType, TypeRef, TypeSchema } from "./type-schema.js"
import { isList, isMap, isScalar, type Json, type JsonMap } from "./value.js"

export const deduceAtom = (atom: Atom, v: Json | undefined): Atom => {
  if (v === undefined || v === null) return atom
  if (isScalar(v)) return atom.scalar === true ? { scalar: true } : atom
  if (isList(v)) return atom.list !== undefined ? { list: atom.list } : atom
  return atom.map !== undefined ? { map: atom.map } : atom
}

export interface AtomHandler<R> {
  scalar(): R
  list(t: ListType): R
  map(t: MapType): R
}

export const handleAtom = <R>(a: Atom, h: AtomHandler<R>): R =>
  a.map !== undefined ? h.map(a.map) : a.scalar === true ? h.scalar() : h.list(a.list!)

/** the type of a map's entry `key`: its field's, else the element type */
export const fieldType = (t: MapType, key: string): TypeRef | undefined => t.fields.get(key)?.type ?? t.elementType

export class ListItemError extends Error {}

/** listItemToPathElement (associative lists only) */
export const listItemElement = (schema: TypeSchema, t: ListType, item: Json): PathElement => {
  if (t.keys.length > 0) {
    if (item === null) throw new ListItemError("associative list with keys may not have a null element")
    if (!isMap(item)) throw new ListItemError("associative list with keys may not have non-map elements")
    const element = schema.resolve(t.elementType).map
    const fields: Array<[string, Json]> = []
    for (const k of t.keys) {
      if (k in item) fields.push([k, item[k]!])
      else {
        const d = element?.fields.get(k)?.default
        if (d !== undefined) fields.push([k, d])
      }
    }
    if (fields.length === 0)
      throw new ListItemError(
        `associative list with keys has an element that omits all key fields ${JSON.stringify(t.keys)} (and doesn't have default values for any key fields)`
      )
    return PE.key(fields)
  }
  if (isMap(item)) throw new ListItemError("associative list without keys has an element that's a map type")
  if (isList(item)) throw new ListItemError("not supported: associative list with lists as elements")
  if (item === null) throw new ListItemError("associative list without keys has an element that's an explicit null")
  return PE.value(item)
}

/** mapValue / listValue: the value as a map or list, null and other kinds as none */
export const asMap = (v: Json | undefined): JsonMap | undefined => (isMap(v) ? v : undefined)
export const asList = (v: Json | undefined): ReadonlyArray<Json> | undefined => (isList(v) ? v : undefined)
