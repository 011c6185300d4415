/**
 * apimachinery/pkg/labels: label selectors. `parse` is labels.Parse (the `labelSelector` query
 * parameter): requirements joined by ",", each `key`, `!key`, `key=v`, `key==v`, `key!=v`,
 * `key in (a,b)`, `key notin (a,b)`, `key>n`, `key<n`. Errors are apimachinery's, word for word.
 * Requirements are sorted by key, as upstream, so `toString` is canonical.
 *
 * @module
 */
import { Either } from "effect"
import { fieldInvalid, isQualifiedName, isValidLabelValue } from "./validation.js"

/** A parsed label selector (labels.Selector). */
export interface LabelSelector {
  /** whether a set of labels satisfies every requirement */
  readonly matches: (labels: Readonly<Record<string, string>>) => boolean
  /** whether the selector has no requirements (it selects everything) */
  readonly empty: () => boolean
  /** the canonical text (labels.Selector.String) */
  readonly toString: () => string
}

/** A requirement's operator, as labels.Parse reads it (`exists` for `key`, `!` for `!key`, `gt`/`lt` for `>`/`<`). */
export type Operator = "in" | "notin" | "=" | "==" | "!=" | "exists" | "!" | "gt" | "lt"

/** One requirement of a label selector: a key, an operator and its values. */
export interface Requirement {
  readonly key: string
  readonly operator: Operator
  readonly values: ReadonlyArray<string>
}

const binaryOperators = ["in", "notin", "=", "==", "!=", "gt", "lt"]

const parseInt64 = (s: string): bigint | undefined => {
  if (!/^[+-]?[0-9]+$/.test(s)) return undefined
  const n = BigInt(s)
  return n >= -(1n << 63n) && n < 1n << 63n ? n : undefined
}

/** Requirement.Matches */
export const requirementMatches = (r: Requirement, labels: Readonly<Record<string, string>>): boolean => {
  const has = Object.prototype.hasOwnProperty.call(labels, r.key)
  switch (r.operator) {
    case "in":
    case "=":
    case "==":
      return has && r.values.includes(labels[r.key]!)
    case "notin":
    case "!=":
      return !has || !r.values.includes(labels[r.key]!)
    case "exists":
      return has
    case "!":
      return !has
    case "gt":
    case "lt": {
      if (!has || r.values.length !== 1) return false
      const v = parseInt64(labels[r.key]!)
      const bound = parseInt64(r.values[0]!)
      if (v === undefined || bound === undefined) return false
      return r.operator === "gt" ? v > bound : v < bound
    }
  }
}

const sortedValues = (values: ReadonlyArray<string>): ReadonlyArray<string> => [...values].sort()

/** Requirement.String */
export const requirementString = (r: Requirement): string => {
  const values = r.values.length === 1 ? r.values[0]! : sortedValues(r.values).join(",")
  switch (r.operator) {
    case "!":
      return `!${r.key}`
    case "exists":
      return r.key
    case "in":
      return `${r.key} in (${values})`
    case "notin":
      return `${r.key} notin (${values})`
    case "gt":
      return `${r.key}>${values}`
    case "lt":
      return `${r.key}<${values}`
    default:
      return `${r.key}${r.operator}${values}`
  }
}

/** A selector over its (key-sorted) requirements. */
export const fromRequirements = (
  requirements: ReadonlyArray<Requirement>
): LabelSelector & {
  readonly requirements: ReadonlyArray<Requirement>
  /** the value `label` is required to equal (`key=v`, `key==v` or `key in (v)`), if any */
  readonly requiresExactMatch: (label: string) => string | undefined
} => {
  const reqs = [...requirements].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
  const text = reqs.map(requirementString).join(",")
  return {
    requirements: reqs,
    matches: (labels) => {
      for (const r of reqs) if (!requirementMatches(r, labels)) return false
      return true
    },
    empty: () => reqs.length === 0,
    toString: () => text,
    requiresExactMatch: (label) => {
      const r = reqs.find((x) => x.key === label)
      if (r === undefined) return undefined
      return (r.operator === "=" || r.operator === "==" || r.operator === "in") && r.values.length === 1
        ? r.values[0]
        : undefined
    }
  }
}

/** The selector that selects every object (labels.Everything). */
export const everything = fromRequirements([])

/** SelectorFromSet: key=value for each entry (no validation, as upstream). */
export const selectorFromSet = (set: Readonly<Record<string, string>>) =>
  fromRequirements(Object.entries(set).map(([key, value]) => ({ key, operator: "=" as const, values: [value] })))

// ---- the lexer ----

type Token = "error" | "eos" | ")" | "," | "!" | "==" | "=" | ">" | "id" | "in" | "<" | "!=" | "notin" | "("

const literalTokens: Record<string, Token> = {
  ")": ")",
  ",": ",",
  "!": "!",
  "==": "==",
  "=": "=",
  ">": ">",
  in: "in",
  "<": "<",
  "!=": "!=",
  notin: "notin",
  "(": "("
}

const isWhitespace = (c: string) => c === " " || c === "\t" || c === "\r" || c === "\n"
const isSpecial = (c: string) => c === "=" || c === "!" || c === "(" || c === ")" || c === "," || c === ">" || c === "<"

interface Item {
  readonly tok: Token
  readonly lit: string
}

/** Lexer.Lex over the whole input (byte-wise, as Go; JS strings are UTF-16 but the specials are ASCII) */
const scan = (s: string): Array<Item> => {
  const items: Array<Item> = []
  let pos = 0
  for (;;) {
    while (pos < s.length && isWhitespace(s[pos]!)) pos++
    if (pos >= s.length) {
      items.push({ tok: "eos", lit: "" })
      return items
    }
    if (isSpecial(s[pos]!)) {
      let buffer = ""
      let last: Item | undefined
      while (pos < s.length && isSpecial(s[pos]!)) {
        buffer += s[pos]!
        const t = literalTokens[buffer]
        if (t !== undefined) {
          last = { tok: t, lit: buffer }
          pos++
        } else if (last !== undefined) {
          break
        } else {
          pos++
        }
      }
      items.push(last ?? { tok: "error", lit: `error expected: keyword found '${buffer}'` })
      continue
    }
    let buffer = ""
    while (pos < s.length && !isSpecial(s[pos]!) && !isWhitespace(s[pos]!)) buffer += s[pos++]!
    items.push({ tok: literalTokens[buffer] ?? "id", lit: buffer })
  }
}

class ParseError {
  constructor(readonly message: string) {}
}

const validateKey = (key: string): string | undefined => {
  const errs = isQualifiedName(key)
  return errs.length === 0 ? undefined : fieldInvalid("<nil>", key, errs.join("; "))
}

/** NewRequirement's checks (the key was validated by the parser already) */
const newRequirement = (key: string, operator: Operator, values: ReadonlyArray<string>): Requirement => {
  const errs: Array<string> = []
  const keyErr = validateKey(key)
  if (keyErr !== undefined) errs.push(keyErr.replace(/^<nil>/, "key"))
  const list = `[]string{${values.map((v) => JSON.stringify(v)).join(", ")}}`
  const invalidValues = (detail: string) => `values: Invalid value: ${list}: ${detail}`
  switch (operator) {
    case "in":
    case "notin":
      if (values.length === 0) errs.push(invalidValues("for 'in', 'notin' operators, values set can't be empty"))
      break
    case "=":
    case "==":
    case "!=":
      if (values.length !== 1) errs.push(invalidValues("exact-match compatibility requires one single value"))
      break
    case "exists":
    case "!":
      if (values.length !== 0) errs.push(invalidValues("values set must be empty for exists and does not exist"))
      break
    case "gt":
    case "lt":
      if (values.length !== 1) errs.push(invalidValues("for 'Gt', 'Lt' operators, exactly one value is required"))
      values.forEach((v, i) => {
        if (parseInt64(v) === undefined) {
          errs.push(fieldInvalid(`values[${i}]`, v, "for 'Gt', 'Lt' operators, the value must be an integer"))
        }
      })
      break
  }
  values.forEach((v, i) => {
    const e = isValidLabelValue(v)
    if (e.length > 0) errs.push(fieldInvalid(`values[${i}][${key}]`, v, e.join("; ")))
  })
  if (errs.length === 1) throw new ParseError(errs[0]!)
  if (errs.length > 1) throw new ParseError(`[${errs.join(", ")}]`)
  return { key, operator, values }
}

class Parser {
  private position = 0
  constructor(private readonly items: Array<Item>) {}

  /** in the Values context, "in" and "notin" are identifiers */
  private look(values: boolean): Item {
    const it = this.items[this.position]!
    return values && (it.tok === "in" || it.tok === "notin") ? { tok: "id", lit: it.lit } : it
  }
  private take(values: boolean): Item {
    const it = this.look(values)
    this.position++
    return it
  }

  parse(): Array<Requirement> {
    const reqs: Array<Requirement> = []
    for (;;) {
      const { lit, tok } = this.look(true)
      if (tok === "id" || tok === "!") {
        try {
          reqs.push(this.requirement())
        } catch (e) {
          if (e instanceof ParseError) throw new ParseError(`unable to parse requirement: ${e.message}`)
          throw e
        }
        const t = this.take(true)
        if (t.tok === "eos") return reqs
        if (t.tok === ",") {
          const t2 = this.look(true)
          if (t2.tok !== "id" && t2.tok !== "!")
            throw new ParseError(`found '${t2.lit}', expected: identifier after ','`)
        } else {
          throw new ParseError(`found '${t.lit}', expected: ',' or 'end of string'`)
        }
      } else if (tok === "eos") {
        return reqs
      } else {
        throw new ParseError(`found '${lit}', expected: !, identifier, or 'end of string'`)
      }
    }
  }

  private requirement(): Requirement {
    let operator: Operator | undefined
    let t = this.take(true)
    if (t.tok === "!") {
      operator = "!"
      t = this.take(true)
    }
    if (t.tok !== "id") throw new ParseError(`found '${t.lit}', expected: identifier`)
    const key = t.lit
    const keyErr = validateKey(key)
    if (keyErr !== undefined) throw new ParseError(keyErr)
    // "!key" is complete whatever follows (the caller then wants "," or the end)
    if (operator === "!") return newRequirement(key, "!", [])
    const next = this.look(true).tok
    if (next === "eos" || next === ",") return newRequirement(key, "exists", [])
    const op = this.operator()
    const values = op === "in" || op === "notin" ? this.setValues() : this.exactValue()
    return newRequirement(key, op, [...new Set(values)].sort())
  }

  private operator(): Operator {
    const { lit, tok } = this.take(false)
    switch (tok) {
      case "in":
        return "in"
      case "=":
        return "="
      case "==":
        return "=="
      case ">":
        return "gt"
      case "<":
        return "lt"
      case "notin":
        return "notin"
      case "!=":
        return "!="
      default:
        throw new ParseError(`found '${lit}', expected: ${binaryOperators.join(", ")}`)
    }
  }

  private setValues(): Array<string> {
    let t = this.take(true)
    if (t.tok !== "(") throw new ParseError(`found '${t.lit}' expected: '('`)
    t = this.look(true)
    if (t.tok === "id" || t.tok === ",") {
      const s = this.identifiers()
      if (this.take(true).tok !== ")") throw new ParseError(`found '${t.lit}', expected: ')'`)
      return s
    }
    if (t.tok === ")") {
      this.take(true)
      return [""]
    }
    throw new ParseError(`found '${t.lit}', expected: ',', ')' or identifier`)
  }

  private identifiers(): Array<string> {
    const s = new Set<string>()
    for (;;) {
      const t = this.take(true)
      if (t.tok === "id") {
        s.add(t.lit)
        const t2 = this.look(true)
        if (t2.tok === ",") continue
        if (t2.tok === ")") return [...s]
        throw new ParseError(`found '${t2.lit}', expected: ',' or ')'`)
      } else if (t.tok === ",") {
        if (s.size === 0) s.add("")
        const t2 = this.look(true)
        if (t2.tok === ")") {
          s.add("")
          return [...s]
        }
        if (t2.tok === ",") {
          this.take(true)
          s.add("")
        }
      } else {
        throw new ParseError(`found '${t.lit}', expected: ',', or identifier`)
      }
    }
  }

  private exactValue(): Array<string> {
    const t = this.look(true)
    if (t.tok === "eos" || t.tok === ",") return [""]
    const v = this.take(true)
    if (v.tok === "id") return [v.lit]
    throw new ParseError(`found '${v.lit}', expected: identifier`)
  }
}

/** labels.Parse: the selector, or apimachinery's error text. */
export const parse = (text: string): Either.Either<ReturnType<typeof fromRequirements>, string> => {
  try {
    return Either.right(fromRequirements(new Parser(scan(text)).parse()))
  } catch (e) {
    if (e instanceof ParseError) return Either.left(e.message)
    throw e
  }
}
