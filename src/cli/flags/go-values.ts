/**
 * Go's readings of a flag's text, with Go's error texts: strconv.ParseBool, strconv.ParseInt and
 * ParseUint with base 0 (0x, 0o, 0b and 0 prefixes, `_` between digits), time.ParseDuration, and
 * pflag's CSV reading of a string slice. etcdctl (pflag) and etcd (Go's flag package) read their
 * flags with these, so a value they refuse is refused here with the same reason.
 *
 * Plain functions, no effect: the bin's lean path (src/cli/lean/) parses command lines with them.
 */

/**
 * Why a text is not a value: Go's message, and whether it was out of range (Go's flag package words
 * that apart). `whole`: the reason is the whole error line (etcd's own check of an enum flag).
 */
export class ValueError {
  constructor(
    readonly reason: string,
    readonly range = false,
    readonly whole = false
  ) {}
}

/** strconv.Quote for the texts a command line carries: `"`, `\` and control characters escaped. */
export const goQuote = (s: string): string => {
  let out = '"'
  for (const ch of s) {
    const c = ch.codePointAt(0)!
    if (ch === '"' || ch === "\\") out += `\\${ch}`
    else if (c === 0x07) out += "\\a"
    else if (c === 0x08) out += "\\b"
    else if (c === 0x0c) out += "\\f"
    else if (c === 0x0a) out += "\\n"
    else if (c === 0x0d) out += "\\r"
    else if (c === 0x09) out += "\\t"
    else if (c === 0x0b) out += "\\v"
    else if (c < 0x20 || c === 0x7f) out += `\\x${c.toString(16).padStart(2, "0")}`
    else if (c >= 0x80 && /[\p{C}\p{Z}]/u.test(ch)) {
      out += c > 0xffff ? `\\U${c.toString(16).padStart(8, "0")}` : `\\u${c.toString(16).padStart(4, "0")}`
    } else out += ch
  }
  return `${out}"`
}

const TRUE = new Set(["1", "t", "T", "TRUE", "true", "True"])
const FALSE = new Set(["0", "f", "F", "FALSE", "false", "False"])

export const parseBool = (text: string): boolean | ValueError => {
  if (TRUE.has(text)) return true
  if (FALSE.has(text)) return false
  return new ValueError(`strconv.ParseBool: parsing ${goQuote(text)}: invalid syntax`)
}

/** strconv's underscoreOK: `_` only between digits (or after a base prefix), as Go literals. */
const underscoreOK = (text: string): boolean => {
  let s = text
  let saw = "^"
  let i = 0
  if (s.length >= 1 && (s[0] === "-" || s[0] === "+")) s = s.slice(1)
  let hex = false
  if (s.length >= 2 && s[0] === "0" && "bBoOxX".includes(s[1]!)) {
    i = 2
    saw = "0"
    hex = s[1] === "x" || s[1] === "X"
  }
  for (; i < s.length; i++) {
    const c = s[i]!
    if ((c >= "0" && c <= "9") || (hex && /[a-fA-F]/.test(c))) {
      saw = "0"
      continue
    }
    if (c === "_") {
      if (saw !== "0") return false
      saw = "_"
      continue
    }
    if (saw === "_") return false
    saw = "!"
  }
  return saw !== "_"
}

/**
 * strconv.ParseUint(text, base, bits) for base 0 (Go's prefixes), 10 or 16: the value, or "invalid
 * syntax" / "value out of range" as `fn` words them.
 */
const parseUnsigned = (
  text: string,
  bits: number,
  fn: string,
  quoted: string,
  radix: 0 | 10 | 16
): bigint | ValueError => {
  const syntax = () => new ValueError(`strconv.${fn}: parsing ${quoted}: invalid syntax`)
  const range = () => new ValueError(`strconv.${fn}: parsing ${quoted}: value out of range`, true)
  if (text === "") return syntax()
  let s = text
  let base = radix === 0 ? 10n : BigInt(radix)
  if (radix === 0 && s[0] === "0") {
    if (s.length >= 3 && "bBoOxX".includes(s[1]!)) {
      base = s[1] === "b" || s[1] === "B" ? 2n : s[1] === "o" || s[1] === "O" ? 8n : 16n
      s = s.slice(2)
    } else {
      base = 8n
      s = s.slice(1)
    }
  }
  const max = (1n << BigInt(bits)) - 1n
  let n = 0n
  let underscores = false
  for (const c of s) {
    if (c === "_" && radix === 0) {
      underscores = true
      continue
    }
    let d: bigint
    if (c >= "0" && c <= "9") d = BigInt(c.charCodeAt(0) - 48)
    else if (/[a-zA-Z]/.test(c)) d = BigInt(c.toLowerCase().charCodeAt(0) - 87)
    else return syntax()
    if (d >= base) return syntax()
    n = n * base + d
    if (n > max) return range()
  }
  if (underscores && !underscoreOK(text)) return syntax()
  return n
}

/** strconv.ParseUint(text, 0, bits) */
export const parseUint = (text: string, bits = 64): bigint | ValueError =>
  parseUnsigned(text, bits, "ParseUint", goQuote(text), 0)

/** strconv.ParseInt(text, base, bits): base 0 as flags read numbers, 10 and 16 as etcdctl reads arguments */
export const parseInt = (text: string, bits = 64, base: 0 | 10 | 16 = 0): bigint | ValueError => {
  const quoted = goQuote(text)
  if (text === "") return new ValueError(`strconv.ParseInt: parsing ${quoted}: invalid syntax`)
  const negative = text[0] === "-"
  const digits = text[0] === "+" || text[0] === "-" ? text.slice(1) : text
  const u = parseUnsigned(digits, bits, "ParseInt", quoted, base)
  if (u instanceof ValueError) return u
  const cutoff = 1n << BigInt(bits - 1)
  if ((!negative && u >= cutoff) || (negative && u > cutoff)) {
    return new ValueError(`strconv.ParseInt: parsing ${quoted}: value out of range`, true)
  }
  return negative ? -u : u
}

/** the time package's quote: non-ASCII and control bytes as \x.., `"` and `\` escaped */
const timeQuote = (s: string): string => {
  let out = '"'
  for (const ch of s) {
    const c = ch.codePointAt(0)!
    if (c >= 0x80 || c < 0x20) {
      for (const b of Buffer.from(ch, "utf8")) out += `\\x${b.toString(16).padStart(2, "0")}`
    } else out += ch === '"' || ch === "\\" ? `\\${ch}` : ch
  }
  return `${out}"`
}

const NANOS: Record<string, bigint> = {
  ns: 1n,
  us: 1000n,
  "\u00b5s": 1000n,
  "\u03bcs": 1000n,
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n
}
const MAX_DURATION = (1n << 63n) - 1n

/** time.ParseDuration: nanoseconds. "300ms", "-1.5h", "2h45m", "0". */
export const parseDurationNanos = (text: string): bigint | ValueError => {
  const invalid = () => new ValueError(`time: invalid duration ${timeQuote(text)}`)
  let s = text
  let negative = false
  if (s !== "" && (s[0] === "-" || s[0] === "+")) {
    negative = s[0] === "-"
    s = s.slice(1)
  }
  if (s === "0") return 0n
  if (s === "") return invalid()
  let total = 0n
  while (s !== "") {
    if (!(s[0] === "." || (s[0]! >= "0" && s[0]! <= "9"))) return invalid()
    const whole = /^[0-9]*/.exec(s)![0]
    s = s.slice(whole.length)
    if (whole.length > 0 && BigInt(whole) > MAX_DURATION) return invalid()
    let fraction = ""
    let hadFraction = false
    if (s[0] === ".") {
      fraction = /^[0-9]*/.exec(s.slice(1))![0]
      hadFraction = fraction.length > 0
      s = s.slice(1 + fraction.length)
    }
    if (whole.length === 0 && !hadFraction) return invalid()
    let i = 0
    while (i < s.length && s[i] !== "." && !(s[i]! >= "0" && s[i]! <= "9")) i++
    if (i === 0) return new ValueError(`time: missing unit in duration ${timeQuote(text)}`)
    const unitText = s.slice(0, i)
    s = s.slice(i)
    const unit = NANOS[unitText]
    if (unit === undefined) {
      return new ValueError(`time: unknown unit ${timeQuote(unitText)} in duration ${timeQuote(text)}`)
    }
    let v = (whole === "" ? 0n : BigInt(whole)) * unit
    if (v > 1n << 63n) return invalid()
    if (hadFraction) {
      // Go: float64(f) * (float64(unit) / scale), truncated
      const f = Number(fraction.slice(0, 18)) / 10 ** Math.min(fraction.length, 18)
      v += BigInt(Math.trunc(f * Number(unit)))
    }
    total += v
    if (total > 1n << 63n) return invalid()
  }
  if (!negative && total > MAX_DURATION) return invalid()
  return negative ? -total : total
}

/** time.ParseDuration in milliseconds (the unit our configuration takes). */
export const parseDurationMillis = (text: string): number | ValueError => {
  const ns = parseDurationNanos(text)
  return ns instanceof ValueError ? ns : Number(ns) / 1e6
}

/** A duration as Go prints it (time.Duration.String) for the defaults in help: "2s", "10m0s", "2h0m0s". */
export const formatDuration = (millis: number): string => {
  if (millis === 0) return "0s"
  if (millis < 1000) return `${millis}ms`
  const total = Math.round(millis / 1000)
  const h = Math.floor(total / 3600)
  const m = Math.floor((total % 3600) / 60)
  const s = total % 60
  if (h > 0) return `${h}h${m}m${s}s`
  if (m > 0) return `${m}m${s}s`
  return `${s}s`
}

/**
 * pflag's string slice: the text read as one CSV record (encoding/csv), "" is no element. A bare
 * quote inside a field is Go's csv error.
 */
export const parseCsv = (text: string): Array<string> | ValueError => {
  if (text === "") return []
  const fields: Array<string> = []
  let i = 0
  for (;;) {
    let field = ""
    if (text[i] === '"') {
      i++
      for (;;) {
        if (i >= text.length) {
          return new ValueError(
            `parse error on line 1, column ${text.length + 1}: extraneous or missing " in quoted-field`
          )
        }
        if (text[i] === '"') {
          if (text[i + 1] === '"') {
            field += '"'
            i += 2
            continue
          }
          i++
          break
        }
        field += text[i++]
      }
      if (i < text.length && text[i] !== ",") {
        return new ValueError(`parse error on line 1, column ${i + 1}: extraneous or missing " in quoted-field`)
      }
    } else {
      while (i < text.length && text[i] !== ",") {
        if (text[i] === '"') {
          return new ValueError(`parse error on line 1, column ${i + 1}: bare " in non-quoted-field`)
        }
        field += text[i++]
      }
    }
    fields.push(field)
    if (i >= text.length) return fields
    i++ // the comma
  }
}
