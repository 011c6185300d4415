/**
 * JSON as the apiserver's Go decoders read it: the syntax errors of encoding/json's scanner
 * (`invalid character 'x' looking for beginning of value`, `unexpected end of JSON input`), the
 * duplicate keys sigs.k8s.io/json reports in strict mode (with their field paths), the offset of
 * every object key (so violations can be put in document order), and encoding/json's
 * UnmarshalTypeError text. Clients see these strings verbatim in 400 responses; parsing is one
 * pass over the bytes, as encoding/json's checkValid + decode.
 */

/** A field path as sigs.k8s.io/json keeps it: keys and array indices. */
export type JsonPath = ReadonlyArray<string | number>

/** `a.b[0].c`: keys joined by ".", indices as [i] (strictFieldStack's rendering). */
export const renderPath = (path: JsonPath): string => {
  let out = ""
  for (const p of path) {
    if (typeof p === "number") out += `[${p}]`
    else out += out === "" ? p : `.${p}`
  }
  return out
}

export interface ParsedJson {
  readonly value: unknown
  /** repeated object keys (the last occurrence wins, as in Go), in document order */
  readonly duplicates: ReadonlyArray<{ readonly path: JsonPath; readonly offset: number }>
  /** the byte offset of each key's (last) occurrence, by rendered path */
  readonly offsets: ReadonlyMap<string, number>
}

/** strconv.Quote of a byte taken as a rune, in single quotes (the scanner's quoteChar). */
export const quoteChar = (c: number): string => {
  if (c === 0x27) return "'\\''"
  if (c === 0x22) return "'\"'"
  switch (c) {
    case 0x07:
      return "'\\a'"
    case 0x08:
      return "'\\b'"
    case 0x0c:
      return "'\\f'"
    case 0x0a:
      return "'\\n'"
    case 0x0d:
      return "'\\r'"
    case 0x09:
      return "'\\t'"
    case 0x0b:
      return "'\\v'"
    case 0x5c:
      return "'\\\\'"
  }
  if (c < 0x20 || c === 0x7f) return `'\\x${c.toString(16).padStart(2, "0")}'`
  if ((c >= 0x80 && c < 0xa1) || c === 0xad) return `'\\u${c.toString(16).padStart(4, "0")}'`
  return `'${String.fromCharCode(c)}'`
}

export class GoJsonSyntaxError {
  constructor(
    readonly message: string,
    readonly offset: number
  ) {}
}

const END = "unexpected end of JSON input"

const isSpace = (c: number) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d
const isDigit = (c: number) => c >= 0x30 && c <= 0x39
const isHex = (c: number) => isDigit(c) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46)

const utf8 = new TextDecoder("utf-8")

/** Where a value sits: what the scanner says after it (and before an unexpected byte). */
type Context = "top" | "array" | "object"

const afterValue: Record<Context, string> = {
  top: "after top-level value",
  array: "after array element",
  object: "after object key:value pair"
}

class Parser {
  i = 0
  readonly duplicates: Array<{ path: JsonPath; offset: number }> = []
  readonly offsets = new Map<string, number>()
  constructor(readonly b: Uint8Array) {}

  fail(message: string): never {
    throw new GoJsonSyntaxError(message, this.i)
  }
  invalid(context: string): never {
    if (this.i >= this.b.length) this.fail(END)
    this.fail(`invalid character ${quoteChar(this.b[this.i]!)} ${context}`)
  }
  skipSpace(): void {
    while (this.i < this.b.length && isSpace(this.b[this.i]!)) this.i++
  }

  value(path: Array<string | number>): unknown {
    this.skipSpace()
    if (this.i >= this.b.length) this.fail(END)
    const c = this.b[this.i]!
    switch (c) {
      case 0x7b:
        return this.object(path)
      case 0x5b:
        return this.array(path)
      case 0x22:
        return this.string()
      case 0x74:
        return this.literal("true", true)
      case 0x66:
        return this.literal("false", false)
      case 0x6e:
        return this.literal("null", null)
    }
    if (c === 0x2d || isDigit(c)) return this.number()
    return this.invalid("looking for beginning of value")
  }

  literal(word: string, v: unknown): unknown {
    for (let k = 1; k < word.length; k++) {
      this.i++
      if (this.i >= this.b.length) this.fail(END)
      if (this.b[this.i] !== word.charCodeAt(k)) this.invalid(`in literal ${word} (expecting '${word[k]}')`)
    }
    this.i++
    return v
  }

  number(): number {
    const start = this.i
    const b = this.b
    if (b[this.i] === 0x2d) {
      this.i++
      if (this.i >= b.length) this.fail(END)
      if (!isDigit(b[this.i]!)) this.invalid("in numeric literal")
    }
    if (b[this.i] === 0x30) this.i++
    else while (this.i < b.length && isDigit(b[this.i]!)) this.i++
    if (this.i < b.length && b[this.i] === 0x2e) {
      this.i++
      if (this.i >= b.length) this.fail(END)
      if (!isDigit(b[this.i]!)) this.invalid("after decimal point in numeric literal")
      while (this.i < b.length && isDigit(b[this.i]!)) this.i++
    }
    if (this.i < b.length && (b[this.i] === 0x65 || b[this.i] === 0x45)) {
      this.i++
      if (this.i < b.length && (b[this.i] === 0x2b || b[this.i] === 0x2d)) this.i++
      if (this.i >= b.length) this.fail(END)
      if (!isDigit(b[this.i]!)) this.invalid("in exponent of numeric literal")
      while (this.i < b.length && isDigit(b[this.i]!)) this.i++
    }
    return Number(utf8.decode(b.subarray(start, this.i)))
  }

  string(): string {
    const b = this.b
    this.i++ // opening quote
    const start = this.i
    let simple = true
    for (;;) {
      if (this.i >= b.length) this.fail(END)
      const c = b[this.i]!
      if (c === 0x22) break
      if (c < 0x20) this.invalid("in string literal")
      if (c === 0x5c) {
        simple = false
        this.i++
        if (this.i >= b.length) this.fail(END)
        const e = b[this.i]!
        if (e === 0x75) {
          for (let k = 0; k < 4; k++) {
            this.i++
            if (this.i >= b.length) this.fail(END)
            if (!isHex(b[this.i]!)) this.invalid("in \\u hexadecimal character escape")
          }
        } else if (![0x22, 0x5c, 0x2f, 0x62, 0x66, 0x6e, 0x72, 0x74].includes(e)) {
          this.invalid("in string escape code")
        }
      }
      this.i++
    }
    const raw = b.subarray(start, this.i)
    this.i++ // closing quote
    if (simple) return utf8.decode(raw)
    return unescape(utf8.decode(raw))
  }

  array(path: Array<string | number>): Array<unknown> {
    this.i++
    const out: Array<unknown> = []
    this.skipSpace()
    if (this.i < this.b.length && this.b[this.i] === 0x5d) {
      this.i++
      return out
    }
    for (;;) {
      path.push(out.length)
      out.push(this.value(path))
      path.pop()
      this.skipSpace()
      if (this.i >= this.b.length) this.fail(END)
      const c = this.b[this.i]!
      if (c === 0x2c) {
        this.i++
        continue
      }
      if (c === 0x5d) {
        this.i++
        return out
      }
      this.invalid(afterValue.array)
    }
  }

  object(path: Array<string | number>): Record<string, unknown> {
    this.i++
    const out: Record<string, unknown> = {}
    this.skipSpace()
    if (this.i < this.b.length && this.b[this.i] === 0x7d) {
      this.i++
      return out
    }
    for (;;) {
      this.skipSpace()
      if (this.i >= this.b.length) this.fail(END)
      if (this.b[this.i] !== 0x22) this.invalid("looking for beginning of object key string")
      const offset = this.i
      const key = this.string()
      this.skipSpace()
      if (this.i >= this.b.length) this.fail(END)
      if (this.b[this.i] !== 0x3a) this.invalid("after object key")
      this.i++
      path.push(key)
      const rendered = renderPath(path)
      if (Object.prototype.hasOwnProperty.call(out, key)) this.duplicates.push({ path: [...path], offset })
      this.offsets.set(rendered, offset)
      const v = this.value(path)
      path.pop()
      if (key === "__proto__") Object.defineProperty(out, key, { value: v, enumerable: true, writable: true })
      else out[key] = v
      this.skipSpace()
      if (this.i >= this.b.length) this.fail(END)
      const c = this.b[this.i]!
      if (c === 0x2c) {
        this.i++
        continue
      }
      if (c === 0x7d) {
        this.i++
        return out
      }
      this.invalid(afterValue.object)
    }
  }
}

/** The escapes of a JSON string body (already checked), lone surrogates as U+FFFD as Go does. */
const unescape = (s: string): string => {
  let out = ""
  for (let k = 0; k < s.length; k++) {
    const ch = s[k]!
    if (ch !== "\\") {
      out += ch
      continue
    }
    const e = s[++k]!
    switch (e) {
      case "b":
        out += "\b"
        break
      case "f":
        out += "\f"
        break
      case "n":
        out += "\n"
        break
      case "r":
        out += "\r"
        break
      case "t":
        out += "\t"
        break
      case "u": {
        const code = parseInt(s.slice(k + 1, k + 5), 16)
        k += 4
        if (code >= 0xd800 && code < 0xdc00 && s[k + 1] === "\\" && s[k + 2] === "u") {
          const low = parseInt(s.slice(k + 3, k + 7), 16)
          if (low >= 0xdc00 && low < 0xe000) {
            out += String.fromCharCode(code, low)
            k += 6
            break
          }
        }
        out += code >= 0xd800 && code < 0xe000 ? "\ufffd" : String.fromCharCode(code)
        break
      }
      default:
        out += e
    }
  }
  return out
}

/**
 * One JSON document, Go's way: the value (duplicate keys: the last wins), or the scanner's
 * error for the first byte that is not JSON. Nothing may follow the value but whitespace.
 */
export const parseGoJson = (bytes: Uint8Array): ParsedJson | GoJsonSyntaxError => {
  const p = new Parser(bytes)
  try {
    const value = p.value([])
    p.skipSpace()
    if (p.i < bytes.length) p.invalid(afterValue.top)
    return { value, duplicates: p.duplicates, offsets: p.offsets }
  } catch (e) {
    if (e instanceof GoJsonSyntaxError) return e
    throw e
  }
}

/** json.Valid's error (the same scan, the value thrown away). */
export const goJsonError = (bytes: Uint8Array): string | undefined => {
  const r = parseGoJson(bytes)
  return r instanceof GoJsonSyntaxError ? r.message : undefined
}

/** The JSON type name in UnmarshalTypeError's Value ("string", "number", "object", …). */
export const jsonKindOf = (u: unknown): string => {
  if (u === null) return "null"
  if (Array.isArray(u)) return "array"
  switch (typeof u) {
    case "string":
      return "string"
    case "number":
      return "number"
    case "boolean":
      return "bool"
    default:
      return "object"
  }
}

/** encoding/json's UnmarshalTypeError.Error(). */
export const unmarshalTypeError = (value: string, goType: string, struct?: string, field?: string): string =>
  struct !== undefined || field !== undefined
    ? `json: cannot unmarshal ${value} into Go struct field ${struct ?? ""}.${field ?? ""} of type ${goType}`
    : `json: cannot unmarshal ${value} into Go value of type ${goType}`

/** Go's json.Marshal of a decoded document: maps with sorted keys, compact, HTML-safe escapes. */
export const goMarshalSorted = (u: unknown): string => {
  if (u === null || typeof u !== "object") return goJsonString(u)
  if (Array.isArray(u)) return `[${u.map(goMarshalSorted).join(",")}]`
  const keys = Object.keys(u).sort(byBytes)
  return `{${keys.map((k) => `${goJsonString(k)}:${goMarshalSorted((u as Record<string, unknown>)[k])}`).join(",")}}`
}

const goJsonString = (u: unknown): string =>
  JSON.stringify(u).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)

/** Go's string order (bytes of UTF-8); equal to UTF-16 order outside the astral planes. */
export const byBytes = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)
