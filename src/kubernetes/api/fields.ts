/**
 * apimachinery/pkg/fields: field selectors (the `fieldSelector` query parameter): terms joined by
 * ",", each `field=value`, `field==value` or `field!=value`; `\`, `,` and `=` in values are escaped
 * with a backslash. Only equality: a field that is absent counts as "".
 *
 * @module
 */
import { Either } from "effect"

/** A parsed field selector (fields.Selector). */
export interface FieldSelector {
  /** whether an object's fields satisfy every term (an absent field counts as "") */
  readonly matches: (fields: Readonly<Record<string, string>>) => boolean
  /** whether the selector has no terms (it selects everything) */
  readonly empty: () => boolean
  /** the value `field` is required to equal (fields.Selector.RequiresExactMatch), if any */
  readonly requiresExactMatch: (field: string) => string | undefined
  /** the canonical text (fields.Selector.String) */
  readonly toString: () => string
}

/** One term of a field selector: `field=value`, or `field!=value` when `not`. */
export interface Term {
  readonly field: string
  readonly value: string
  readonly not: boolean
}

/** EscapeValue */
export const escapeValue = (s: string): string => s.replace(/[\\,=]/g, (c) => `\\${c}`)

/** UnescapeValue, with apimachinery's errors */
export const unescapeValue = (s: string): Either.Either<string, string> => {
  if (!/[\\,=]/.test(s)) return Either.right(s)
  let out = ""
  let inSlash = false
  for (const c of s) {
    if (inSlash) {
      if (c === "\\" || c === "," || c === "=") out += c
      else return Either.left(`invalid field selector: invalid escape sequence: \\${c}`)
      inSlash = false
      continue
    }
    if (c === "\\") inSlash = true
    else if (c === "," || c === "=")
      return Either.left(`invalid field selector: unescaped character in value: ${c.codePointAt(0)}`)
    else out += c
  }
  if (inSlash) return Either.left("invalid field selector: invalid escape sequence: \\")
  return Either.right(out)
}

const termString = (t: Term): string => `${t.field}${t.not ? "!=" : "="}${escapeValue(t.value)}`

/** A field selector over its terms, in the order given. */
export const fromTerms = (terms: ReadonlyArray<Term>): FieldSelector & { readonly terms: ReadonlyArray<Term> } => {
  const text = terms.map(termString).join(",")
  return {
    terms,
    matches: (fields) => {
      for (const t of terms) {
        const v = fields[t.field] ?? ""
        if (t.not ? v === t.value : v !== t.value) return false
      }
      return true
    },
    empty: () => terms.length === 0,
    requiresExactMatch: (field) => terms.find((t) => !t.not && t.field === field)?.value,
    toString: () => text
  }
}

/** The selector that selects every object (fields.Everything). */
export const everything = fromTerms([])

/** OneTermEqualSelector */
export const oneTermEqualSelector = (field: string, value: string) => fromTerms([{ field, value, not: false }])

/** SelectorFromSet */
export const selectorFromSet = (set: Readonly<Record<string, string>>) =>
  fromTerms(
    Object.keys(set)
      .sort()
      .map((field) => ({ field, value: set[field]!, not: false }))
  )

/** splitTerms: split on commas not escaped by a backslash */
const splitTerms = (s: string): Array<string> => {
  if (s === "") return []
  const terms: Array<string> = []
  let start = 0
  let inSlash = false
  for (let i = 0; i < s.length; i++) {
    const c = s[i]
    if (inSlash) inSlash = false
    else if (c === "\\") inSlash = true
    else if (c === ",") {
      terms.push(s.slice(start, i))
      start = i + 1
    }
  }
  terms.push(s.slice(start))
  return terms
}

const termOperators = ["!=", "==", "="] as const

/** fields.ParseSelector: the selector, or apimachinery's error text. */
export const parseSelector = (selector: string): Either.Either<ReturnType<typeof fromTerms>, string> => {
  const parts = splitTerms(selector).sort()
  const terms: Array<Term> = []
  for (const part of parts) {
    if (part === "") continue
    let parsed: { lhs: string; op: string; rhs: string } | undefined
    for (let i = 0; i < part.length && parsed === undefined; i++) {
      const rest = part.slice(i)
      for (const op of termOperators) {
        if (rest.startsWith(op)) {
          parsed = { lhs: part.slice(0, i), op, rhs: part.slice(i + op.length) }
          break
        }
      }
    }
    if (parsed === undefined) return Either.left(`invalid selector: '${selector}'; can't understand '${part}'`)
    const value = unescapeValue(parsed.rhs)
    if (Either.isLeft(value)) return Either.left(value.left)
    terms.push({ field: parsed.lhs, value: value.right, not: parsed.op === "!=" })
  }
  return Either.right(fromTerms(terms))
}

/** The apiserver's error for a field it cannot select on (a resource's field label conversion). */
export const fieldLabelNotSupported = (field: string): string => `field label not supported: ${field}`

/** runtime.DefaultMetaV1FieldSelectorConversion's error (kinds without their own conversion, e.g. ConfigMap). */
export const notKnownFieldSelector = (field: string): string =>
  `${JSON.stringify(field)} is not a known field selector: only "metadata.name", "metadata.namespace"`
