/**
 * storage/continue.go: the continue token of a paged list, base64url (no padding) of
 * `{"v":"meta.k8s.io/v1","rv":N,"start":"<next key without the list prefix>"}`. Tokens are
 * opaque to clients but stable across servers, so ours and the apiserver's are byte-identical.
 */
import { Either } from "effect"
import { GoJsonSyntaxError, jsonKindOf, parseGoJson, unmarshalTypeError } from "../api/go-json.js"

export const ErrInvalidStartRV =
  "continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)"
export const ErrEmptyStartKey = "continue key is not valid: encoded start key empty (version meta.k8s.io/v1)"
export const ErrGenericInvalidKey = "continue key is not valid"
export const ErrUnrecognizedEncodedVersion = "continue key is not valid: server does not recognize this encoded version"

/** Go's json.Marshal escapes <, > and & (HTML-safe) and U+2028/2029, which JSON.stringify does not. */
const goJson = (value: unknown): string =>
  JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)

/** Go's path.Clean for slash-separated paths. */
export const goPathClean = (p: string): string => {
  if (p === "") return "."
  const rooted = p.startsWith("/")
  const out: Array<string> = []
  for (const part of p.split("/")) {
    if (part === "" || part === ".") continue
    if (part === "..") {
      if (out.length > 0 && out[out.length - 1] !== "..") out.pop()
      else if (!rooted) out.push("..")
      continue
    }
    out.push(part)
  }
  const joined = out.join("/")
  if (rooted) return "/" + joined
  return joined === "" ? "." : joined
}

/** EncodeContinue: the token for continuing at `key` (which must start with `keyPrefix`) at `rv`. */
export const encodeContinue = (key: string, keyPrefix: string, rv: bigint): Either.Either<string, string> => {
  if (!key.startsWith(keyPrefix) || keyPrefix === "") {
    return Either.left("unable to encode next field: the key and key prefix do not match")
  }
  const start = key.slice(keyPrefix.length)
  // rv is an int64; JSON numbers of this size are written as digits either way
  const json = goJson({ v: "meta.k8s.io/v1", rv: 0, start }).replace('"rv":0', `"rv":${rv.toString()}`)
  return Either.right(Buffer.from(json, "utf8").toString("base64url"))
}

export interface DecodedContinue {
  /** the full key to continue from (keyPrefix + start) */
  readonly fromKey: string
  /** the list's resourceVersion; negative means "the latest" (a token minted after compaction) */
  readonly rv: bigint
}

const base64url = /^[A-Za-z0-9_-]*$/

/** DecodeContinue, with the apiserver's error messages. */
export const decodeContinue = (token: string, keyPrefix: string): Either.Either<DecodedContinue, string> => {
  if (!base64url.test(token) || token.length % 4 === 1) {
    return Either.left(`${ErrGenericInvalidKey}: illegal base64 data at input byte ${firstBadBase64(token)}`)
  }
  const bytes = Buffer.from(token, "base64url")
  const text = bytes.toString("utf8")
  // json.Unmarshal into continueToken: Go's syntax and type errors
  const parsed = parseGoJson(bytes)
  if (parsed instanceof GoJsonSyntaxError) return Either.left(`${ErrGenericInvalidKey}: ${parsed.message}`)
  // null decodes into the zero token (and fails on its version below)
  const doc = parsed.value ?? {}
  if (typeof doc !== "object" || Array.isArray(doc)) {
    return Either.left(`${ErrGenericInvalidKey}: ${unmarshalTypeError(jsonKindOf(doc), "storage.continueToken")}`)
  }
  const c = doc as { v?: unknown; rv?: unknown; start?: unknown }
  for (const [f, goType] of [
    ["v", "string"],
    ["rv", "int64"],
    ["start", "string"]
  ] as const) {
    const u = c[f]
    if (u === undefined || u === null) continue
    const ok = goType === "int64" ? typeof u === "number" && Number.isInteger(u) : typeof u === "string"
    if (!ok) {
      const kind = jsonKindOf(u)
      const value = kind === "number" ? `number ${String(u)}` : kind
      return Either.left(`${ErrGenericInvalidKey}: ${unmarshalTypeError(value, goType, "continueToken", f)}`)
    }
  }
  const version = typeof c.v === "string" ? c.v : ""
  if (version !== "meta.k8s.io/v1") return Either.left(`${ErrUnrecognizedEncodedVersion} ${version}`)
  // rv is an int64 in Go; read it from the text so large values stay exact
  const rvMatch = /"rv"\s*:\s*(-?\d+)/.exec(text)
  const rv = rvMatch === null ? 0n : BigInt(rvMatch[1]!)
  if (rv === 0n) return Either.left(ErrInvalidStartRV)
  const start = typeof c.start === "string" ? c.start : ""
  if (start === "") return Either.left(ErrEmptyStartKey)
  // path.Clean defends against traversal: the start key can never climb above keyPrefix
  const key = start.startsWith("/") ? start : "/" + start
  const cleaned = goPathClean(key)
  if (cleaned !== key) return Either.left(`${ErrGenericInvalidKey}: ${start}`)
  return Either.right({ fromKey: keyPrefix + cleaned.slice(1), rv })
}

const firstBadBase64 = (token: string): number => {
  for (let i = 0; i < token.length; i++) if (!/[A-Za-z0-9_-]/.test(token[i]!)) return i
  return token.length - 1
}
