/**
 * JSON read as Go's encoding/json reads it, for the gateway's request bodies: the same syntax
 * checks and the same error texts (scanner.go's "invalid character 'x' looking for beginning of
 * value", "unexpected EOF", …), since etcd's gateway returns them to the client verbatim.
 *
 * Values keep their source text (`raw`): jsonpb reads an int64 given as a string by re-reading
 * the text between the quotes as JSON, and numbers must not lose digits to a double.
 */

export type JsonValue =
  | { readonly _tag: "object"; readonly raw: string; readonly fields: ReadonlyArray<readonly [string, JsonValue]> }
  | { readonly _tag: "array"; readonly raw: string; readonly items: ReadonlyArray<JsonValue> }
  | { readonly _tag: "string"; readonly raw: string; readonly value: string }
  | { readonly _tag: "number"; readonly raw: string }
  | { readonly _tag: "bool"; readonly raw: string; readonly value: boolean }
  | { readonly _tag: "null"; readonly raw: string }

/** A syntax error: Go's text. */
export class JsonSyntaxError {
  readonly _tag = "JsonSyntaxError"
  constructor(readonly message: string) {}
}

/** The input ended inside a value (the caller words it: Decoder "unexpected EOF", Unmarshal "unexpected end of JSON input"). */
class Incomplete {
  readonly _tag = "Incomplete"
}

/** Go's quoteChar: the offending character as the scanner prints it. */
const quoteChar = (c: string): string => {
  if (c === "'") return "'\\''"
  if (c === '"') return "'\"'"
  const q = JSON.stringify(c)
  const code = c.codePointAt(0)!
  // strconv.Quote writes control characters as \x.. (JSON.stringify as \u00..)
  if (code < 0x20 && q.startsWith('"\\u')) return `'\\x${code.toString(16).padStart(2, "0")}'`
  return `'${q.slice(1, -1)}'`
}

const invalid = (c: string, context: string) => new JsonSyntaxError(`invalid character ${quoteChar(c)} ${context}`)

const isSpace = (c: string) => c === " " || c === "\t" || c === "\n" || c === "\r"
const isDigit = (c: string | undefined) => c !== undefined && c >= "0" && c <= "9"
const isHex = (c: string | undefined) => c !== undefined && /^[0-9a-fA-F]$/.test(c)

/** encoding/json's maxNestingDepth. */
export const MAX_DEPTH = 10000

type Frame =
  | {
      readonly kind: "object"
      readonly start: number
      readonly fields: Array<readonly [string, JsonValue]>
      key: string
    }
  | { readonly kind: "array"; readonly start: number; readonly items: Array<JsonValue> }

class Parser {
  pos = 0
  constructor(readonly text: string) {}

  skipSpace(): void {
    while (this.pos < this.text.length && isSpace(this.text[this.pos]!)) this.pos++
  }

  /** The next character, or Incomplete at the end. */
  peek(): string {
    const c = this.text[this.pos]
    if (c === undefined) throw new Incomplete()
    return c
  }

  /** One scalar at pos (after white space), or undefined at an object or array. */
  scalar(): JsonValue | undefined {
    const start = this.pos
    const c = this.peek()
    switch (c) {
      case "{":
      case "[":
        return undefined
      case '"': {
        const value = this.string("in string literal")
        return { _tag: "string", raw: this.text.slice(start, this.pos), value }
      }
      case "t":
        this.literal("true")
        return { _tag: "bool", raw: "true", value: true }
      case "f":
        this.literal("false")
        return { _tag: "bool", raw: "false", value: false }
      case "n":
        this.literal("null")
        return { _tag: "null", raw: "null" }
      default:
        if (c === "-" || isDigit(c)) return this.number(start)
        throw invalid(c, "looking for beginning of value")
    }
  }

  /**
   * One value. Objects and arrays are read with an explicit stack, not recursion: 10000 levels
   * (Go's limit) would overflow the call stack.
   */
  value(): JsonValue {
    const stack: Array<Frame> = []
    for (;;) {
      this.skipSpace()
      let done: JsonValue | undefined = this.scalar()
      if (done === undefined) {
        // an object or array opens
        const start = this.pos
        const open = this.text[this.pos]!
        if (stack.length >= MAX_DEPTH) throw invalid(open, "exceeded max depth")
        this.pos++
        this.skipSpace()
        const frame: Frame =
          open === "{" ? { kind: "object", start, fields: [], key: "" } : { kind: "array", start, items: [] }
        const close = open === "{" ? "}" : "]"
        if (this.peek() === close) {
          this.pos++
          done =
            frame.kind === "object"
              ? { _tag: "object", raw: this.text.slice(start, this.pos), fields: frame.fields }
              : { _tag: "array", raw: this.text.slice(start, this.pos), items: frame.items }
        } else {
          if (frame.kind === "object") frame.key = this.key()
          stack.push(frame)
          continue
        }
      }
      // a value is complete: it belongs to the innermost open container, which may close too
      for (;;) {
        const top = stack[stack.length - 1]
        if (top === undefined) return done
        if (top.kind === "object") top.fields.push([top.key, done])
        else top.items.push(done)
        this.skipSpace()
        const next = this.peek()
        this.pos++
        if (top.kind === "object") {
          if (next === ",") {
            this.skipSpace()
            top.key = this.key()
            break
          }
          if (next !== "}") throw invalid(next, "after object key:value pair")
          stack.pop()
          done = { _tag: "object", raw: this.text.slice(top.start, this.pos), fields: top.fields }
        } else {
          if (next === ",") break
          if (next !== "]") throw invalid(next, "after array element")
          stack.pop()
          done = { _tag: "array", raw: this.text.slice(top.start, this.pos), items: top.items }
        }
      }
    }
  }

  /** An object key and its colon, at pos. */
  key(): string {
    const c = this.peek()
    if (c !== '"') throw invalid(c, "looking for beginning of object key string")
    const key = this.string("in string literal")
    this.skipSpace()
    const colon = this.peek()
    if (colon !== ":") throw invalid(colon, "after object key")
    this.pos++
    return key
  }

  literal(word: string): void {
    for (let i = 0; i < word.length; i++) {
      const c = this.peek()
      if (c !== word[i]) throw invalid(c, `in literal ${word} (expecting ${quoteChar(word[i]!)})`)
      this.pos++
    }
  }

  number(start: number): JsonValue {
    if (this.text[this.pos] === "-") {
      this.pos++
      if (!isDigit(this.peek())) throw invalid(this.peek(), "in numeric literal")
    }
    if (this.text[this.pos] === "0") this.pos++
    else while (isDigit(this.text[this.pos])) this.pos++
    if (this.text[this.pos] === ".") {
      this.pos++
      if (!isDigit(this.peek())) throw invalid(this.peek(), "after decimal point in numeric literal")
      while (isDigit(this.text[this.pos])) this.pos++
    }
    if (this.text[this.pos] === "e" || this.text[this.pos] === "E") {
      this.pos++
      if (this.peek() === "+" || this.peek() === "-") this.pos++
      if (!isDigit(this.peek())) throw invalid(this.peek(), "in exponent of numeric literal")
      while (isDigit(this.text[this.pos])) this.pos++
    }
    return { _tag: "number", raw: this.text.slice(start, this.pos) }
  }

  /** A string token at pos (its opening quote); its value. */
  string(context: string): string {
    const start = this.pos
    this.pos++
    for (;;) {
      const c = this.peek()
      if (c === '"') {
        this.pos++
        break
      }
      if (c === "\\") {
        this.pos++
        const e = this.peek()
        if (e === "u") {
          this.pos++
          for (let i = 0; i < 4; i++) {
            const h = this.peek()
            if (!isHex(h)) throw invalid(h, "in \\u hexadecimal character escape")
            this.pos++
          }
          continue
        }
        if (!'"\\/bfnrt'.includes(e)) throw invalid(e, "in string escape code")
        this.pos++
        continue
      }
      if (c < " ") throw invalid(c, context)
      this.pos++
    }
    // the token is valid JSON now; JSON.parse applies the escapes (lone surrogates as Go's U+FFFD)
    return (JSON.parse(this.text.slice(start, this.pos)) as string).replace(/[\uD800-\uDFFF]/g, (s, i, all) => {
      const code = s.charCodeAt(0)
      const next = (all as string).charCodeAt(i + 1)
      const prev = (all as string).charCodeAt(i - 1)
      if (code < 0xdc00 && next >= 0xdc00 && next <= 0xdfff) return s
      if (code >= 0xdc00 && prev >= 0xd800 && prev < 0xdc00) return s
      return "\uFFFD"
    })
  }
}

/** What the next value of a body is: one value (and where it ended), the end, or more to wait for. */
export type NextValue =
  | { readonly _tag: "Value"; readonly value: JsonValue; readonly end: number }
  | { readonly _tag: "End" }
  | { readonly _tag: "NeedMore" }
  | JsonSyntaxError

/**
 * json.Decoder.Decode over `text` from `from`: the next value, End when only white space is left
 * and `complete`, NeedMore when the value may go on in bytes not received yet. Like Go's Decoder,
 * what follows a value is not looked at; a body cut inside a value is "unexpected EOF".
 */
export const decodeNext = (text: string, from: number, complete: boolean): NextValue => {
  const p = new Parser(text)
  p.pos = from
  p.skipSpace()
  if (p.pos >= text.length) return complete ? { _tag: "End" } : { _tag: "NeedMore" }
  try {
    const value = p.value()
    // a number at the very end may continue in the next chunk
    if (value._tag === "number" && p.pos >= text.length && !complete) return { _tag: "NeedMore" }
    return { _tag: "Value", value, end: p.pos }
  } catch (e) {
    if (e instanceof Incomplete) return complete ? new JsonSyntaxError("unexpected EOF") : { _tag: "NeedMore" }
    if (e instanceof JsonSyntaxError) return e
    throw e
  }
}

/** json.Unmarshal(text): exactly one value (white space around it), or Go's error. */
export const unmarshal = (text: string): JsonValue | JsonSyntaxError => {
  const p = new Parser(text)
  try {
    const value = p.value()
    p.skipSpace()
    if (p.pos < text.length) return invalid(text[p.pos]!, "after top-level value")
    return value
  } catch (e) {
    if (e instanceof Incomplete) return new JsonSyntaxError("unexpected end of JSON input")
    if (e instanceof JsonSyntaxError) return e
    throw e
  }
}
