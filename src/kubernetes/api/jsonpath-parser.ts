/**
 * The JSONPath template language of k8s.io/client-go/util/jsonpath (parser.go, node.go): what a
 * CRD's additionalPrinterColumns and `kubectl get -o jsonpath` are written in. Text outside `{}`
 * is kept; inside, `.field` (with `\` escapes), `['key']`, `[n]`, `[start:end:step]`, `[*]`,
 * `[a,b]` unions, `..` recursive descent, `.*` wildcards, `[?(@.a == "x")]` filters (==, !=, <,
 * >, <=, >= or existence), quoted strings, numbers, booleans and the `range`/`end` identifiers.
 * Errors carry client-go's words ("unterminated filter", "invalid array index x").
 */

export interface SliceParam {
  readonly known: boolean
  readonly value: number
  /** the end of `[n]`: n + 1, counted from the end when n is negative */
  readonly derived: boolean
}

export type JsonPathNode =
  | { readonly _tag: "List"; readonly nodes: Array<JsonPathNode> }
  | { readonly _tag: "Text"; readonly text: string }
  | { readonly _tag: "Field"; readonly name: string }
  | { readonly _tag: "Array"; readonly params: readonly [SliceParam, SliceParam, SliceParam] }
  | {
      readonly _tag: "Filter"
      readonly left: JsonPathList
      readonly right: JsonPathList
      readonly operator: string
    }
  | { readonly _tag: "Int"; readonly value: number }
  | { readonly _tag: "Float"; readonly value: number }
  | { readonly _tag: "Bool"; readonly value: boolean }
  | { readonly _tag: "Wildcard" }
  | { readonly _tag: "Recursive" }
  | { readonly _tag: "Union"; readonly lists: ReadonlyArray<JsonPathList> }
  | { readonly _tag: "Identifier"; readonly name: string }

export type JsonPathList = Extract<JsonPathNode, { _tag: "List" }>

export class JsonPathSyntaxError extends Error {}

const list = (): JsonPathList => ({ _tag: "List", nodes: [] })

const isSpace = (c: string) => c === " " || c === "\t"
const isEndOfLine = (c: string) => c === "\r" || c === "\n"
const isTerminator = (c: string | undefined) =>
  c === undefined || isSpace(c) || isEndOfLine(c) || ".,[]$@{}".includes(c)
const isAlphaNumeric = (c: string | undefined) => c !== undefined && (c === "_" || /^[\p{L}\p{Nd}]$/u.test(c))
const isDigit = (c: string) => /^\p{Nd}$/u.test(c)

const SLICE = /^(-?\d*)(:-?\d*)?(:-?\d*)?$/
const DICT_KEY = /^'([^']*)'$/
const COMPARISON = /^([^!<>=]+)([!<>=]+)(.+?)$/

/** strconv.UnquoteChar's escapes, enough for the quoted strings of filters */
const unquote = (s: string): string => {
  const quote = s[0]
  if (s.length < 2 || quote !== s[s.length - 1] || (quote !== '"' && quote !== "'")) throw new JsonPathSyntaxError()
  const body = s.slice(1, -1)
  if (!body.includes("\\") && !body.includes(quote)) return body
  let out = ""
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!
    if (c === quote) throw new JsonPathSyntaxError("invalid syntax")
    if (c !== "\\") {
      out += c
      continue
    }
    const e = body[++i]
    const simple: Record<string, string> = {
      a: "\x07",
      b: "\b",
      f: "\f",
      n: "\n",
      r: "\r",
      t: "\t",
      v: "\v",
      "\\": "\\"
    }
    if (e !== undefined && simple[e] !== undefined) out += simple[e]
    else if (e === quote) out += e
    else if (e === "x" || e === "u" || e === "U") {
      const n = e === "x" ? 2 : e === "u" ? 4 : 8
      const hex = body.slice(i + 1, i + 1 + n)
      if (!new RegExp(`^[0-9a-fA-F]{${n}}$`).test(hex)) throw new JsonPathSyntaxError("invalid syntax")
      out += String.fromCodePoint(parseInt(hex, 16))
      i += n
    } else throw new JsonPathSyntaxError("invalid syntax")
  }
  return out
}

class Parser {
  pos = 0
  start = 0
  constructor(
    readonly input: string,
    readonly root: JsonPathList
  ) {}

  private next(): string | undefined {
    if (this.pos >= this.input.length) {
      this.pos++ // so that backup() after the end is balanced
      return undefined
    }
    return this.input[this.pos++]
  }
  private backup() {
    this.pos--
  }
  private peek() {
    return this.input[this.pos]
  }
  private consume(): string {
    const v = this.input.slice(this.start, this.pos)
    this.start = this.pos
    return v
  }

  parseText(cur: JsonPathList): void {
    for (;;) {
      if (this.input.startsWith("{", this.pos)) {
        if (this.pos > this.start) cur.nodes.push({ _tag: "Text", text: this.consume() })
        this.pos += 1
        this.consume()
        const inner = list()
        cur.nodes.push(inner)
        return this.inside(inner)
      }
      if (this.next() === undefined) {
        this.pos = this.input.length
        break
      }
    }
    if (this.pos > this.start) cur.nodes.push({ _tag: "Text", text: this.consume() })
  }

  /** parseInsideAction, iterative where client-go recurses */
  private inside(cur: JsonPathList): void {
    for (;;) {
      const rest = this.input.slice(this.pos)
      if (rest.startsWith("}")) {
        this.pos += 1
        this.consume()
        return this.parseText(this.root)
      }
      if (rest.startsWith("[?(")) {
        this.filter(cur)
        continue
      }
      if (rest.startsWith("..")) {
        if (cur.nodes.at(-1)?._tag === "Recursive") throw new JsonPathSyntaxError("invalid multiple recursive descent")
        this.pos += 2
        this.consume()
        cur.nodes.push({ _tag: "Recursive" })
        if (isAlphaNumeric(this.peek())) this.field(cur)
        continue
      }
      const r = this.next()
      if (r === undefined || isEndOfLine(r)) throw new JsonPathSyntaxError("unclosed action")
      else if (r === " " || r === "@" || r === "$") this.consume()
      else if (r === "[") this.array(cur)
      else if (r === '"' || r === "'") this.quote(cur, r)
      else if (r === ".") this.field(cur)
      else if (r === "+" || r === "-" || isDigit(r)) {
        this.backup()
        this.number(cur)
      } else if (isAlphaNumeric(r)) {
        this.backup()
        this.identifier(cur)
      } else {
        const cp = r.codePointAt(0)!
        throw new JsonPathSyntaxError(
          `unrecognized character in action: U+${cp.toString(16).toUpperCase().padStart(4, "0")} '${r}'`
        )
      }
    }
  }

  private identifier(cur: JsonPathList) {
    while (!isTerminator(this.next()));
    this.backup()
    const value = this.consume()
    if (value === "true" || value === "false") cur.nodes.push({ _tag: "Bool", value: value === "true" })
    else cur.nodes.push({ _tag: "Identifier", name: value })
  }

  private number(cur: JsonPathList) {
    const r = this.peek()
    if (r === "+" || r === "-") this.pos++
    for (;;) {
      const c = this.next()
      if (c === undefined || (c !== "." && !isDigit(c))) {
        this.backup()
        break
      }
    }
    const value = this.consume()
    if (/^[+-]?\d+$/.test(value)) cur.nodes.push({ _tag: "Int", value: Number(value) })
    else if (/^[+-]?(\d+\.?\d*|\.\d+)$/.test(value)) cur.nodes.push({ _tag: "Float", value: Number(value) })
    else throw new JsonPathSyntaxError(`cannot parse number ${value}`)
  }

  private array(cur: JsonPathList) {
    for (;;) {
      const c = this.next()
      if (c === undefined || c === "\n") throw new JsonPathSyntaxError("unterminated array")
      if (c === "]") break
    }
    let text = this.consume().slice(1, -1)
    if (text === "*") text = ":"
    const parts = text.split(",")
    if (parts.length > 1) {
      const lists = parts.map((s) => action(`[${s.trim()}]`))
      cur.nodes.push({ _tag: "Union", lists })
      return
    }
    const key = DICT_KEY.exec(text)
    if (key !== null) {
      cur.nodes.push(...action(`.${key[1]}`).nodes)
      return
    }
    const m = SLICE.exec(text)
    if (m === null) throw new JsonPathSyntaxError(`invalid array index ${text}`)
    const params: Array<SliceParam> = []
    for (let i = 0; i < 3; i++) {
      let v = m[i + 1] ?? ""
      if (v !== "") {
        if (i > 0) v = v.slice(1)
        if (i > 0 && v === "") params.push({ known: false, value: 0, derived: false })
        else params.push({ known: true, value: Number(v), derived: false })
      } else if (i === 1) params.push({ known: true, value: params[0]!.value + 1, derived: true })
      else params.push({ known: false, value: 0, derived: false })
    }
    cur.nodes.push({ _tag: "Array", params: [params[0]!, params[1]!, params[2]!] })
  }

  private filter(cur: JsonPathList) {
    this.pos += 3
    this.consume()
    let begin = false
    let end = false
    let pair = ""
    for (;;) {
      const r = this.next()
      if (r === undefined || r === "\n") throw new JsonPathSyntaxError("unterminated filter")
      if (r === '"' || r === "'") {
        if (!begin) {
          begin = true
          pair = r
          continue
        }
        if (this.input[this.pos - 2] !== "\\" && r === pair) end = true
      } else if (r === ")" && begin === end) break
    }
    if (this.next() !== "]") throw new JsonPathSyntaxError("unclosed array expect ]")
    const text = this.consume().slice(0, -2)
    const m = COMPARISON.exec(text)
    if (m === null) cur.nodes.push({ _tag: "Filter", left: action(text), right: list(), operator: "exists" })
    else cur.nodes.push({ _tag: "Filter", left: action(m[1]!), right: action(m[3]!), operator: m[2]! })
  }

  private quote(cur: JsonPathList, end: string) {
    for (;;) {
      const c = this.next()
      if (c === undefined || c === "\n") throw new JsonPathSyntaxError("unterminated quoted string")
      if (c === end && this.input[this.pos - 2] !== "\\") break
    }
    const value = this.consume()
    let s: string
    try {
      s = unquote(value)
    } catch {
      throw new JsonPathSyntaxError(`unquote string ${value} error invalid syntax`)
    }
    cur.nodes.push({ _tag: "Text", text: s })
  }

  private field(cur: JsonPathList) {
    this.consume()
    for (;;) {
      const r = this.next()
      if (r === "\\") this.next()
      else if (isTerminator(r)) {
        this.backup()
        break
      }
    }
    const value = this.consume()
    cur.nodes.push(value === "*" ? { _tag: "Wildcard" } : { _tag: "Field", name: value.replaceAll("\\", "") })
  }
}

/** jsonpath.Parse: the template's root list (text and `{}` actions, each a list). */
export const parseJsonPath = (text: string): JsonPathList => {
  const root = list()
  new Parser(text, root).parseText(root)
  return root
}

/** parseAction: `text` as the inside of one action */
const action = (text: string): JsonPathList => {
  const root = parseJsonPath(`{${text}}`)
  return root.nodes[0] as JsonPathList
}
