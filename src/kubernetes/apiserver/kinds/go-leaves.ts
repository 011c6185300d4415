/**
 * The two leaves with their own decoders: metav1.Time (RFC 3339, stored in UTC to the second, as
 * its MarshalJSON writes it; time.Parse's error text otherwise) and []byte (standard base64 with
 * padding, Go's decoder: newlines skipped, `illegal base64 data at input byte N` otherwise;
 * stored re-encoded).
 */
import { asTypeError, goCustom, type GoSchema } from "./go-types.js"

const RFC3339 = "2006-01-02T15:04:05Z07:00"

const digits = (s: string, at: number, n: number): number | undefined => {
  const part = s.slice(at, at + n)
  return part.length === n && /^[0-9]+$/.test(part) ? Number(part) : undefined
}

/** time.Parse(time.RFC3339, s): the instant, or Go's ParseError text. */
export const parseRFC3339 = (s: string): { ms: number } | { error: string } => {
  const q = JSON.stringify(s)
  const cannot = (at: number, elem: string) => ({
    error: `parsing time ${q} as "${RFC3339}": cannot parse ${JSON.stringify(s.slice(at))} as "${elem}"`
  })
  const range = (what: string) => ({ error: `parsing time ${q}: ${what} out of range` })
  const fields: Array<[number, number, string, string]> = [
    [0, 4, "2006", ""],
    [5, 2, "01", "-"],
    [8, 2, "02", "-"],
    [11, 2, "15", "T"],
    [14, 2, "04", ":"],
    [17, 2, "05", ":"]
  ]
  const v: Array<number> = []
  for (const [at, n, elem, sep] of fields) {
    if (sep !== "" && s[at - 1] !== sep) return cannot(at - 1, sep)
    const d = digits(s, at, n)
    if (d === undefined) return cannot(at, elem)
    v.push(d)
  }
  const [year, month, day, hour, minute, second] = v as [number, number, number, number, number, number]
  if (month < 1 || month > 12) return range("month")
  if (hour > 23) return range("hour")
  if (minute > 59) return range("minute")
  if (second > 59) return range("second")
  const dim = new Date(Date.UTC(year, month, 0)).getUTCDate()
  if (day < 1 || day > dim) return range("day")
  let i = 19
  let frac = 0
  if (s[i] === "." || s[i] === ",") {
    let j = i + 1
    while (j < s.length && /[0-9]/.test(s[j]!)) j++
    frac = Number(`0.${s.slice(i + 1, j) || "0"}`)
    i = j
  }
  let offsetMin = 0
  if (s[i] === "Z") i++
  else if (s[i] === "+" || s[i] === "-") {
    const hh = digits(s, i + 1, 2)
    const mm = digits(s, i + 4, 2)
    if (hh === undefined || s[i + 3] !== ":" || mm === undefined) return cannot(i, "Z07:00")
    offsetMin = (s[i] === "-" ? -1 : 1) * (hh * 60 + mm)
    i += 6
  } else return cannot(i, "Z07:00")
  if (i < s.length) return { error: `parsing time ${q}: extra text: ${JSON.stringify(s.slice(i))}` }
  const ms = Date.UTC(year, month - 1, day, hour, minute, second) + Math.floor(frac * 1000) - offsetMin * 60_000
  return { ms }
}

/** metav1.Time's MarshalJSON form: UTC, seconds. */
export const formatTime = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z")

export const goTime: GoSchema = goCustom("v1.Time", (u) => {
  if (typeof u !== "string") return asTypeError("string")
  const r = parseRFC3339(u)
  if ("error" in r) return { ok: false, message: r.error }
  return { ok: true, value: formatTime(r.ms) }
})

const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
const decodeMap = new Int16Array(256).fill(-1)
for (let i = 0; i < B64.length; i++) decodeMap[B64.charCodeAt(i)] = i

/** base64.StdEncoding.Decode: the bytes, or the CorruptInputError's byte offset. */
export const decodeStdBase64 = (s: string): Uint8Array | number => {
  const src = Buffer.from(s, "latin1")
  const out: Array<number> = []
  let si = 0
  for (;;) {
    const dbuf = [0, 0, 0, 0]
    let dlen = 4
    let j = 0
    let end = false
    for (; j < 4; j++) {
      if (si === src.length) {
        if (j === 0) return Uint8Array.from(out)
        return si - j
      }
      const c = src[si++]!
      const v = decodeMap[c]!
      if (v >= 0) {
        dbuf[j] = v
        continue
      }
      if (c === 0x0a || c === 0x0d) {
        j--
        continue
      }
      if (c !== 0x3d) return si - 1
      // padding
      if (j === 0 || j === 1) return si - 1
      if (j === 2) {
        while (si < src.length && (src[si] === 0x0a || src[si] === 0x0d)) si++
        if (si === src.length) return src.length
        if (src[si] !== 0x3d) return si - 1
        si++
      }
      while (si < src.length && (src[si] === 0x0a || src[si] === 0x0d)) si++
      if (si < src.length) return si
      dlen = j
      end = true
      break
    }
    const val = (dbuf[0]! << 18) | (dbuf[1]! << 12) | (dbuf[2]! << 6) | dbuf[3]!
    const bytes = [(val >> 16) & 0xff, (val >> 8) & 0xff, val & 0xff]
    for (let k = 0; k < dlen - 1; k++) out.push(bytes[k]!)
    if (end) return Uint8Array.from(out)
  }
}

export const goBytes: GoSchema = goCustom("[]uint8", (u) => {
  if (typeof u !== "string") return asTypeError("[]uint8")
  const r = decodeStdBase64(u)
  if (typeof r === "number") return { ok: false, message: `illegal base64 data at input byte ${r}` }
  return { ok: true, value: Buffer.from(r).toString("base64") }
})

const RFC3339_MICRO = "2006-01-02T15:04:05.000000Z07:00"

/** metav1.MicroTime's MarshalJSON form: UTC, exactly six fraction digits. */
export const formatMicroTime = (ms: number, micros = 0): string =>
  new Date(ms).toISOString().replace(/Z$/, `${String(micros).padStart(3, "0")}Z`)

/**
 * time.Parse(RFC3339Micro, s) as metav1.MicroTime's UnmarshalJSON runs it: exactly six fraction
 * digits; the instant in the six-digit UTC form, or Go's ParseError text.
 */
export const parseMicroTime = (s: string): { value: string } | { error: string } => {
  const fracAt = 19
  const goError = (e: string) => ({ error: e.replace(`"${RFC3339}"`, `"${RFC3339_MICRO}"`) })
  const r = parseRFC3339(s)
  if (!/^\.[0-9]{6}/.test(s.slice(fracAt))) {
    if ("error" in parseRFC3339(s.slice(0, fracAt) + "Z") && "error" in r) return goError(r.error)
    const rest = JSON.stringify(s.slice(fracAt))
    return { error: `parsing time ${JSON.stringify(s)} as "${RFC3339_MICRO}": cannot parse ${rest} as ".000000"` }
  }
  if ("error" in r) return goError(r.error)
  return { value: formatMicroTime(r.ms, Number(s.slice(fracAt + 4, fracAt + 7))) }
}

export const goMicroTime: GoSchema = goCustom("v1.MicroTime", (u) => {
  if (typeof u !== "string") return asTypeError("string")
  const r = parseMicroTime(u)
  if ("error" in r) return { ok: false, message: r.error }
  return { ok: true, value: r.value }
})
