/**
 * fieldpath.PathElement: one step of a field path — a field name, a key of an associative list
 * (the item's key fields, sorted by name), a value of a set, or an index — with its order
 * (names < keys < values < indexes), its `String()` (`.spec`, `[name="nginx"]`, `[="a"]`, `[3]`)
 * and its fieldsV1 form (`f:spec`, `k:{"name":"nginx"}`, `v:"a"`, `i:3`), which also serves as
 * the element's identity in a FieldSet.
 */
import { compareStrings, compareValues, type Json, valueToString } from "./value.js"

export type PathElement =
  | { readonly _tag: "Field"; readonly name: string }
  | { readonly _tag: "Key"; readonly fields: ReadonlyArray<readonly [string, Json]> }
  | { readonly _tag: "Value"; readonly value: Json }
  | { readonly _tag: "Index"; readonly index: number }

export type Path = ReadonlyArray<PathElement>

export const field = (name: string): PathElement => ({ _tag: "Field", name })
export const key = (fields: ReadonlyArray<readonly [string, Json]>): PathElement => ({
  _tag: "Key",
  fields: [...fields].sort((a, b) => compareStrings(a[0], b[0]))
})
export const value = (v: Json): PathElement => ({ _tag: "Value", value: v })
export const index = (i: number): PathElement => ({ _tag: "Index", index: i })

const order = { Field: 0, Key: 1, Value: 2, Index: 3 } as const

/** PathElement.Compare */
export const compare = (a: PathElement, b: PathElement): number => {
  if (a._tag !== b._tag) return order[a._tag] < order[b._tag] ? -1 : 1
  switch (a._tag) {
    case "Field":
      return compareStrings(a.name, (b as typeof a).name)
    case "Value":
      return compareValues(a.value, (b as typeof a).value)
    case "Index":
      return Math.sign(a.index - (b as typeof a).index)
    case "Key": {
      const x = a.fields
      const y = (b as typeof a).fields
      for (let i = 0; ; i++) {
        if (i >= x.length || i >= y.length) return x.length < y.length ? -1 : x.length > y.length ? 1 : 0
        const c = compareStrings(x[i]![0], y[i]![0]) || compareValues(x[i]![1], y[i]![1])
        if (c !== 0) return c
      }
    }
  }
}

/** PathElement.String */
export const toString = (pe: PathElement): string => {
  switch (pe._tag) {
    case "Field":
      return `.${pe.name}`
    case "Key":
      return `[${pe.fields.map(([n, v]) => `${n}=${valueToString(v)}`).join(",")}]`
    case "Value":
      return `[=${valueToString(pe.value)}]`
    case "Index":
      return `[${pe.index}]`
  }
}

export const pathToString = (p: Path): string => p.map(toString).join("")

/** serializePathElement: the fieldsV1 key. */
export const serialize = (pe: PathElement): string => {
  switch (pe._tag) {
    case "Field":
      return `f:${pe.name}`
    case "Key":
      return `k:{${pe.fields.map(([n, v]) => `${JSON.stringify(n)}:${JSON.stringify(v)}`).join(",")}}`
    case "Value":
      return `v:${JSON.stringify(pe.value)}`
    case "Index":
      return `i:${pe.index}`
  }
}

/** DeserializePathElement; undefined for a key that is none of the four. */
export const deserialize = (s: string): PathElement | undefined => {
  const body = s.slice(2)
  try {
    switch (s.slice(0, 2)) {
      case "f:":
        return field(body)
      case "v:":
        return value(JSON.parse(body) as Json)
      case "i:": {
        const i = Number(body)
        return Number.isInteger(i) ? index(i) : undefined
      }
      case "k:": {
        const o = JSON.parse(body) as unknown
        if (typeof o !== "object" || o === null || Array.isArray(o)) return undefined
        return key(Object.entries(o as Record<string, Json>))
      }
    }
  } catch {
    return undefined
  }
  return undefined
}
