/**
 * Go's base64.StdEncoding.Decode, for bytes fields in gateway requests: padding required, CR and
 * LF skipped, and Go's error text with Go's byte offset ("illegal base64 data at input byte 3"),
 * which etcd's gateway returns to the client as is.
 */

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
const DECODE = new Int16Array(256).fill(-1)
for (let i = 0; i < ALPHABET.length; i++) DECODE[ALPHABET.charCodeAt(i)] = i

export class Base64Error {
  readonly _tag = "Base64Error"
  constructor(readonly offset: number) {}
  get message(): string {
    return `illegal base64 data at input byte ${this.offset}`
  }
}

const isNewline = (c: number) => c === 10 || c === 13

/** Decodes `text` (a JSON string's value, so one byte per UTF-16 unit below 256). */
export const decodeStdBase64 = (text: string): Uint8Array | Base64Error => {
  const src = Buffer.from(text, "utf8")
  const out: Array<number> = []
  let si = 0
  while (si < src.length) {
    const quantum = [0, 0, 0, 0]
    let dlen = 4
    let j = 0
    let done = false
    for (; j < 4; j++) {
      if (si === src.length) {
        if (j === 0) return Uint8Array.from(out)
        return new Base64Error(si - j)
      }
      const c = src[si]!
      si++
      const v = DECODE[c]!
      if (v >= 0) {
        quantum[j] = v
        continue
      }
      if (isNewline(c)) {
        j--
        continue
      }
      if (c !== 61 /* = */) return new Base64Error(si - 1)
      // padding: only after two or three characters of a quantum
      if (j < 2) return new Base64Error(si - 1)
      if (j === 2) {
        while (si < src.length && isNewline(src[si]!)) si++
        if (si === src.length) return new Base64Error(src.length)
        if (src[si] !== 61) return new Base64Error(si - 1)
        si++
      }
      while (si < src.length && isNewline(src[si]!)) si++
      if (si < src.length) return new Base64Error(si)
      dlen = j
      done = true
      break
    }
    const n = (quantum[0]! << 18) | (quantum[1]! << 12) | (quantum[2]! << 6) | quantum[3]!
    out.push((n >> 16) & 0xff)
    if (dlen >= 3) out.push((n >> 8) & 0xff)
    if (dlen >= 4) out.push(n & 0xff)
    if (done) break
    // trailing newlines after the last full quantum
    while (si < src.length && isNewline(src[si]!)) si++
  }
  return Uint8Array.from(out)
}
