/**
 * structured-merge-diff's value package over plain JSON: the kinds a value can be, Go's order of
 * values (numbers < strings < booleans < lists < maps < null), deep equality, and `ToString`,
 * the form a value takes in a field path (`[name="nginx"]`). `undefined` is an absent value.
 */
import { goQuote } from "../api/validation.js"

export type Json = null | boolean | number | string | ReadonlyArray<Json> | { readonly [k: string]: Json }
export type JsonMap = { readonly [k: string]: Json }

export const isMap = (v: unknown): v is JsonMap => typeof v === "object" && v !== null && !Array.isArray(v)
export const isList = (v: unknown): v is ReadonlyArray<Json> => Array.isArray(v)
export const isScalar = (v: unknown): v is string | number | boolean =>
  typeof v === "string" || typeof v === "number" || typeof v === "boolean"

/** strings.Compare: byte order of the UTF-8 encodings, which is code point order. */
export const compareStrings = (a: string, b: string): number => {
  if (a === b) return 0
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) {
    const x = a.codePointAt(i)!
    const y = b.codePointAt(i)!
    if (x !== y) return x < y ? -1 : 1
    if (x > 0xffff) i++
  }
  return a.length < b.length ? -1 : a.length > b.length ? 1 : 0
}

const rank = (v: Json): number =>
  typeof v === "number"
    ? 0
    : typeof v === "string"
      ? 1
      : typeof v === "boolean"
        ? 2
        : Array.isArray(v)
          ? 3
          : v === null
            ? 5
            : 4

/** value.Compare */
export const compareValues = (a: Json, b: Json): number => {
  const ra = rank(a)
  const rb = rank(b)
  if (ra !== rb) return ra < rb ? -1 : 1
  switch (ra) {
    case 0:
      return (a as number) < (b as number) ? -1 : (a as number) > (b as number) ? 1 : 0
    case 1:
      return compareStrings(a as string, b as string)
    case 2:
      return a === b ? 0 : a === false ? -1 : 1
    case 3: {
      const x = a as ReadonlyArray<Json>
      const y = b as ReadonlyArray<Json>
      for (let i = 0; i < Math.min(x.length, y.length); i++) {
        const c = compareValues(x[i]!, y[i]!)
        if (c !== 0) return c
      }
      return x.length < y.length ? -1 : x.length > y.length ? 1 : 0
    }
    case 4: {
      const x = a as JsonMap
      const y = b as JsonMap
      const kx = Object.keys(x).sort(compareStrings)
      const ky = Object.keys(y).sort(compareStrings)
      for (let i = 0; i < Math.min(kx.length, ky.length); i++) {
        const c = compareStrings(kx[i]!, ky[i]!) || compareValues(x[kx[i]!]!, y[ky[i]!]!)
        if (c !== 0) return c
      }
      return kx.length < ky.length ? -1 : kx.length > ky.length ? 1 : 0
    }
    default:
      return 0
  }
}

/** value.Equals */
export const equalValues = (a: Json | undefined, b: Json | undefined): boolean => {
  if (a === b) return true
  if (a === undefined || b === undefined || a === null || b === null) return false
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false
    return a.every((x, i) => equalValues(x, (b as ReadonlyArray<Json>)[i]))
  }
  if (isMap(a)) {
    if (!isMap(b)) return false
    const ka = Object.keys(a)
    if (ka.length !== Object.keys(b).length) return false
    return ka.every((k) => k in b && equalValues(a[k], b[k]))
  }
  return false
}

/** value.ToString: strings Go-quoted, lists bracketed, maps as k=v pairs. */
export const valueToString = (v: Json): string => {
  if (v === null) return "null"
  if (typeof v === "string") return goQuote(v)
  if (typeof v === "number" || typeof v === "boolean") return String(v)
  if (Array.isArray(v)) return `[${v.map(valueToString).join(",")}]`
  return Object.entries(v as JsonMap)
    .map(([k, x]) => `${k}=${valueToString(x)}`)
    .join("")
}
