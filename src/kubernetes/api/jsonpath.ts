/**
 * client-go's JSONPath evaluation (util/jsonpath/jsonpath.go) over a decoded JSON document, as the
 * apiserver runs it on an unstructured object: FindResults gives one list of values per node of
 * the template's root, PrintResults renders values as `kubectl get -o jsonpath` and the CRD table
 * convertor do. Values keep Go's kinds by their JSON shape: an integral number is an int64, any
 * other a float64 (a stored `1.0` reads as the int 1 here), a string's `*` gives its bytes. Map
 * wildcards follow the object's key order where Go's is random. `range`/`end` are not evaluated
 * (an error). Every failure is a JsonPathEvalError with client-go's text.
 */
import { goMarshalSorted } from "./go-json.js"
import { type JsonPathList, type JsonPathNode, parseJsonPath } from "./jsonpath-parser.js"

export class JsonPathEvalError extends Error {}

type Kind = "bool" | "int" | "float" | "string" | "invalid"

const kindOf = (v: unknown): Kind => {
  switch (typeof v) {
    case "boolean":
      return "bool"
    case "number":
      return Number.isInteger(v) ? "int" : "float"
    case "string":
      return "string"
    default:
      return "invalid"
  }
}

const isMap = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v)

/** a Go type name for error texts */
const goType = (v: unknown): string =>
  v === null || v === undefined
    ? "<invalid reflect.Value>"
    : Array.isArray(v)
      ? "[]interface {}"
      : isMap(v)
        ? "map[string]interface {}"
        : kindOf(v) === "int"
          ? "int64"
          : kindOf(v) === "float"
            ? "float64"
            : typeof v === "boolean"
              ? "bool"
              : "string"

/** the elements a wildcard or a recursive descent visits */
const children = (v: unknown): ReadonlyArray<unknown> => {
  if (Array.isArray(v)) return v
  if (isMap(v)) return Object.values(v)
  if (typeof v === "string") return Array.from(new TextEncoder().encode(v))
  return []
}

const compare = (op: string, a: unknown, b: unknown): boolean => {
  const ka = kindOf(a)
  const kb = kindOf(b)
  if (ka === "invalid" || kb === "invalid") throw new JsonPathEvalError("invalid type for comparison")
  if (ka !== kb) throw new JsonPathEvalError("incompatible types for comparison")
  const less = (): boolean => {
    if (ka === "bool") throw new JsonPathEvalError("invalid type for comparison")
    return (a as number | string) < (b as number | string)
  }
  switch (op) {
    case "==":
      return a === b
    case "!=":
      return a !== b
    case "<":
      return less()
    case "<=":
      return less() || a === b
    case ">":
      return !(less() || a === b)
    case ">=":
      return !less()
    default:
      throw new JsonPathEvalError(`unrecognized filter operator ${op}`)
  }
}

class Evaluator {
  constructor(readonly allowMissingKeys: boolean) {}

  walk(input: ReadonlyArray<unknown>, node: JsonPathNode): ReadonlyArray<unknown> {
    switch (node._tag) {
      case "List":
        return node.nodes.reduce((cur, n) => this.walk(cur, n), input)
      case "Text":
        return [node.text]
      case "Int":
      case "Float":
      case "Bool":
        return input.map(() => node.value)
      case "Field":
        return this.field(input, node.name)
      case "Array":
        return this.array(input, node.params)
      case "Filter":
        return this.filter(input, node)
      case "Wildcard":
        return input.flatMap((v) => (v === null ? [] : children(v)))
      case "Recursive":
        return this.recursive(input)
      case "Union":
        return node.lists.flatMap((l) => this.walk(input, l))
      case "Identifier":
        throw new JsonPathEvalError(
          node.name === "range" || node.name === "end"
            ? `${node.name} is not supported here`
            : `unrecognized identifier ${node.name}`
        )
    }
  }

  private field(input: ReadonlyArray<unknown>, name: string): ReadonlyArray<unknown> {
    if (input.length === 0) return []
    const out: Array<unknown> = []
    for (const v of input) if (isMap(v) && Object.hasOwn(v, name)) out.push(v[name])
    if (out.length === 0 && !this.allowMissingKeys) throw new JsonPathEvalError(`${name} is not found`)
    return out
  }

  private array(input: ReadonlyArray<unknown>, params: Extract<JsonPathNode, { _tag: "Array" }>["params"]) {
    const out: Array<unknown> = []
    for (const v of input) {
      if (v === null) continue
      if (!Array.isArray(v)) throw new JsonPathEvalError(`${goType(v)} is not array or slice`)
      const len = v.length
      let start = params[0].known ? params[0].value : 0
      if (start < 0) start += len
      let end = params[1].known ? params[1].value : len
      if (end < 0 || (end === 0 && params[1].derived)) end += len
      if (end === start) return out
      if (start >= len || start < 0)
        throw new JsonPathEvalError(`array index out of bounds: index ${start}, length ${len}`)
      if (end > len || end < 0)
        throw new JsonPathEvalError(`array index out of bounds: index ${end - 1}, length ${len}`)
      if (start > end) throw new JsonPathEvalError(`starting index ${start} is greater than ending index ${end}`)
      const step = params[2].known ? params[2].value : 1
      if (step <= 0) throw new JsonPathEvalError("step must be > 0")
      for (let i = start; i < end; i += step) out.push(v[i])
    }
    return out
  }

  private recursive(input: ReadonlyArray<unknown>): ReadonlyArray<unknown> {
    const out: Array<unknown> = []
    for (const v of input) {
      if (v === null) continue
      const cs = children(v)
      if (cs.length === 0) continue
      out.push(v, ...this.recursive(cs))
    }
    return out
  }

  private filter(input: ReadonlyArray<unknown>, node: Extract<JsonPathNode, { _tag: "Filter" }>) {
    const out: Array<unknown> = []
    for (const v of input) {
      if (!Array.isArray(v)) throw new JsonPathEvalError(`${goType(v)} is not array or slice and cannot be filtered`)
      for (const item of v) {
        if (node.operator === "exists") {
          let lefts: ReadonlyArray<unknown> = []
          try {
            lefts = this.walk([item], node.left)
          } catch {
            // client-go looks only at what was found
          }
          if (lefts.length > 0) out.push(item)
          continue
        }
        const one = (l: JsonPathList): ReadonlyArray<unknown> => {
          const r = this.walk([item], l)
          if (r.length > 1) throw new JsonPathEvalError("can only compare one element at a time")
          return r
        }
        const lefts = one(node.left)
        if (lefts.length === 0) continue
        const rights = one(node.right)
        if (rights.length === 0) continue
        if (compare(node.operator, lefts[0], rights[0])) out.push(item)
      }
    }
    return out
  }
}

/** A parsed template (jsonpath.New + Parse); throws JsonPathSyntaxError. */
export interface JsonPath {
  readonly root: JsonPathList
  readonly allowMissingKeys: boolean
}

export const compileJsonPath = (template: string, allowMissingKeys = true): JsonPath => ({
  root: parseJsonPath(template),
  allowMissingKeys
})

/** FindResults: one list of values per root node; throws JsonPathEvalError. */
export const findResults = (path: JsonPath, data: unknown): ReadonlyArray<ReadonlyArray<unknown>> => {
  const e = new Evaluator(path.allowMissingKeys)
  return path.root.nodes.map((n) => e.walk([data], n))
}

/** fmt's %v of a float64: strconv's shortest 'g' (%e when the exponent is below -4 or above 5) */
export const goFloat = (f: number): string => {
  if (Number.isNaN(f)) return "NaN"
  if (!Number.isFinite(f)) return f > 0 ? "+Inf" : "-Inf"
  if (f === 0) return Object.is(f, -0) ? "-0" : "0"
  const [mantissa, e] = f.toExponential().split("e") as [string, string]
  const exp = Number(e)
  if (exp < -4 || exp > 5) return `${mantissa}e${exp < 0 ? "-" : "+"}${String(Math.abs(exp)).padStart(2, "0")}`
  return String(f)
}

/**
 * One value as PrintResults writes it: objects and arrays as Go's JSON, numbers as fmt does. A
 * JSON null is `null` when found in the document (Execute) and `<no value>` when the table
 * convertor prints the value it took out of the results.
 */
export const printValue = (v: unknown, nullText = "null"): string => {
  if (v === null || v === undefined) return nullText
  if (typeof v === "object") return goMarshalSorted(v)
  if (typeof v === "number") return Number.isInteger(v) && Math.abs(v) < 2 ** 63 ? BigInt(v).toString() : goFloat(v)
  return String(v)
}

/** Execute: each root node's values separated by spaces, the nodes one after another */
export const executeJsonPath = (path: JsonPath, data: unknown): string =>
  findResults(path, data)
    .map((values) => values.map((v) => printValue(v)).join(" "))
    .join("")
