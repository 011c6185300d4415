/**
 * etcdctl's output formats (etcdctl/ctlv3/command/printer_simple.go, printer_json.go), byte for
 * byte where the two can be compared: simple lines, and JSON as Go's encoding/json writes etcd's
 * protobuf structs (snake_case fields, zero values omitted, int64/uint64 as bare numbers, bytes
 * as base64).
 */
import type { Event, KeyValue, ResponseHeader } from "../../client/index.js"

export type WriteOut = "simple" | "json"

/** A JSON text with bigints written as bare numbers (uint64 ids do not fit a double). */
export const json = (value: unknown): string =>
  JSON.stringify(value, (_k, v) => (typeof v === "bigint" ? `\u0000${v}\u0000` : v)).replace(
    /"\\u0000(-?\d+)\\u0000"/g,
    "$1"
  )

const b64 = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64")

/** Go's omitempty: drop zero numbers, empty strings/bytes, false, undefined. */
const omitEmpty = (entries: ReadonlyArray<readonly [string, unknown]>): Record<string, unknown> => {
  const out: Record<string, unknown> = {}
  for (const [k, v] of entries) {
    if (v === undefined || v === 0n || v === 0 || v === "" || v === false || v === null) continue
    if (Array.isArray(v) && v.length === 0) continue
    out[k] = v
  }
  return out
}

export const headerJson = (h: ResponseHeader) =>
  omitEmpty([
    ["cluster_id", h.clusterId],
    ["member_id", h.memberId],
    ["revision", h.revision],
    ["raft_term", h.raftTerm]
  ])

export const kvJson = (kv: KeyValue) =>
  omitEmpty([
    ["key", kv.key.length > 0 ? b64(kv.key) : undefined],
    ["create_revision", kv.createRevision],
    ["mod_revision", kv.modRevision],
    ["version", kv.version],
    ["value", kv.value.length > 0 ? b64(kv.value) : undefined],
    ["lease", kv.lease]
  ])

export const eventJson = (e: Event) =>
  omitEmpty([
    ["type", e.type],
    ["kv", kvJson(e.kv)],
    ["prev_kv", e.prevKv === undefined ? undefined : kvJson(e.prevKv)]
  ])

/** How the simple format prints: etcdctl's -w and --hex. */
export interface PrintOptions {
  readonly writeOut: WriteOut
  readonly hex: boolean
}

/** bytes as the simple format prints them: text, or with --hex each byte as \xNN */
export const bytesText = (bytes: Uint8Array, hex = false): string => {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  return hex ? b.toString("hex").replace(/(..)/g, "\\x$1") : b.toString()
}

/** printKV: the key (unless value-only), then the value, one line each. */
export const kvLines = (kv: KeyValue, options: { readonly keysOnly?: boolean; readonly hex?: boolean } = {}): string =>
  options.keysOnly === true
    ? `${bytesText(kv.key, options.hex)}\n\n`
    : `${bytesText(kv.key, options.hex)}\n${bytesText(kv.value, options.hex)}\n`

/** The simple watch printer: the event type, the previous kv if any, the kv. */
export const eventLines = (e: Event, hex = false): string =>
  `${e.type === 0 ? "PUT" : "DELETE"}\n${e.prevKv === undefined ? "" : kvLines(e.prevKv, { hex })}${kvLines(e.kv, { hex })}`

/** humanize.Bytes: SI units, one decimal below 10. */
export const humanBytes = (n: bigint): string => {
  const s = Number(n)
  if (s < 10) return `${s} B`
  const sizes = ["B", "kB", "MB", "GB", "TB", "PB", "EB"]
  const e = Math.floor(Math.log(s) / Math.log(1000))
  const val = Math.floor((s / 1000 ** e) * 10 + 0.5) / 10
  // Go's %.0f rounds a half to even (20.5 → "20")
  const whole = Math.round(val) - (val % 1 === 0.5 && Math.round(val) % 2 === 1 ? 1 : 0)
  return `${val < 10 ? val.toFixed(1) : String(whole)} ${sizes[e]}`
}

/** Lease ids print as 16 hex digits (`%016x`). */
export const leaseId = (id: bigint): string => BigInt.asUintN(64, id).toString(16).padStart(16, "0")

export const write = (text: string): void => {
  process.stdout.write(text)
}
