/**
 * Go's JSON of an object ↔ its generated.proto message, as the Go types convert (the Go struct is
 * the hub: JSON → struct → protobuf and back). Driven by protobufjs' reflection, with the
 * apimachinery types whose protobuf and JSON shapes differ written out:
 * - metav1.Time: `{seconds, nanos}` ↔ RFC 3339 in UTC to the second; MicroTime to the microsecond.
 *   An empty message is Go's zero time, whose JSON is `null` (time_proto.go writes nothing for it).
 * - resource.Quantity `{string}` ↔ its string; intstr.IntOrString `{type, intVal, strVal}` ↔ a
 *   number or a string; runtime.RawExtension `{raw}` and metav1.FieldsV1 `{Raw}` ↔ the JSON in raw.
 * - bytes ↔ base64 strings; int64 ↔ numbers; maps and repeated fields ↔ objects and arrays.
 * Presence follows Go: a message field on the wire is a struct or a non-nil pointer and is always
 * in the JSON (`{}` when empty); a scalar is left out when zero (omitempty) unless its Go field is
 * a pointer (`*bool`: present means set) or has no omitempty (`POINTERS`, `NOT_OMITTED`, read off the
 * Go types of k8s.io/api v0.37.2). Maps and repeated fields are left out when empty, except a
 * list's `items` (the apiserver sends `[]`). So JSON → protobuf → JSON is the identity for objects
 * in Go's JSON shape (test/kubernetes/api/protobuf/go-message.property.test.ts).
 */
import protobufjs from "protobufjs"

const META = "k8s.io.apimachinery.pkg.apis.meta.v1"
const TIME = `.${META}.Time`
const MICRO_TIME = `.${META}.MicroTime`
const FIELDS_V1 = `.${META}.FieldsV1`
const QUANTITY = ".k8s.io.apimachinery.pkg.api.resource.Quantity"
const INT_OR_STRING = ".k8s.io.apimachinery.pkg.util.intstr.IntOrString"
const RAW_EXTENSION = ".k8s.io.apimachinery.pkg.runtime.RawExtension"

/** Scalar fields whose Go field is a pointer: on the wire means set, so kept when zero. */
const POINTERS = new Set([
  `${META}.ObjectMeta.deletionGracePeriodSeconds`,
  `${META}.OwnerReference.controller`,
  `${META}.OwnerReference.blockOwnerDeletion`,
  `${META}.ListMeta.remainingItemCount`,
  `${META}.DeleteOptions.gracePeriodSeconds`,
  `${META}.DeleteOptions.orphanDependents`,
  `${META}.DeleteOptions.propagationPolicy`,
  `${META}.DeleteOptions.ignoreStoreReadErrorWithClusterBreakingPotential`,
  `${META}.Preconditions.uid`,
  `${META}.Preconditions.resourceVersion`,
  "k8s.io.api.core.v1.ConfigMap.immutable",
  "k8s.io.api.core.v1.Secret.immutable",
  "k8s.io.api.coordination.v1.LeaseSpec.holderIdentity",
  "k8s.io.api.coordination.v1.LeaseSpec.leaseDurationSeconds",
  "k8s.io.api.coordination.v1.LeaseSpec.leaseTransitions",
  "k8s.io.api.coordination.v1.LeaseSpec.strategy",
  "k8s.io.api.coordination.v1.LeaseSpec.preferredHolder"
])

/** Scalar fields without omitempty: their zero value is in Go's JSON. */
const NOT_OMITTED = new Set([
  `${META}.OwnerReference.apiVersion`,
  `${META}.OwnerReference.kind`,
  `${META}.OwnerReference.name`,
  `${META}.OwnerReference.uid`,
  `${META}.WatchEvent.type`,
  "k8s.io.api.core.v1.NamespaceCondition.type",
  "k8s.io.api.core.v1.NamespaceCondition.status",
  "k8s.io.api.core.v1.Event.reportingComponent",
  "k8s.io.api.core.v1.Event.reportingInstance",
  "k8s.io.api.events.v1.EventSeries.count"
])

type Json = Record<string, unknown>
type Message = Record<string, unknown>

const has = (o: object, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k)

const toNumber = (v: unknown): number => (typeof v === "number" ? v : Number(String(v)))

const pad = (n: number, width: number) => String(n).padStart(width, "0")

/** Go's `t.UTC().Format(RFC3339)` or RFC3339Micro of seconds and nanos. */
const formatTime = (seconds: number, nanos: number, micro: boolean): string => {
  const d = new Date(seconds * 1000)
  const base = d.toISOString().slice(0, 19)
  return micro ? `${base}.${pad(Math.floor(nanos / 1000), 6)}Z` : `${base}Z`
}

const RFC3339 = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/i

/** RFC 3339 → seconds and nanos (time.Parse); undefined when it is not one. */
export const parseTime = (s: string): { seconds: number; nanos: number } | undefined => {
  const m = RFC3339.exec(s)
  if (m === null) return undefined
  const zone = m[3]!.toUpperCase()
  const ms = Date.parse(`${m[1]}${zone === "Z" ? "Z" : zone}`)
  if (Number.isNaN(ms)) return undefined
  return { seconds: Math.floor(ms / 1000), nanos: Number((m[2] ?? "").padEnd(9, "0")) }
}

const timeToJson = (m: Message, micro: boolean): string | null => {
  if (!has(m, "seconds") && !has(m, "nanos")) return null
  return formatTime(toNumber(m["seconds"] ?? 0), toNumber(m["nanos"] ?? 0), micro)
}

const timeToMessage = (v: unknown, micro: boolean): Message => {
  if (typeof v !== "string") return {}
  const t = parseTime(v)
  if (t === undefined) throw new Error(`parsing time ${JSON.stringify(v)} as RFC 3339`)
  // Time is JSON to the second; MicroTime to the microsecond
  return micro ? { seconds: t.seconds, nanos: Math.floor(t.nanos / 1000) * 1000 } : { seconds: t.seconds }
}

const utf8 = new TextDecoder()
const rawJson = (raw: unknown): unknown => {
  const bytes = raw instanceof Uint8Array ? raw : new Uint8Array()
  return bytes.length === 0 ? null : (JSON.parse(utf8.decode(bytes)) as unknown)
}

/** The apimachinery types with their own JSON, by the message's full name. */
const special: Record<string, { toJson(m: Message): unknown; toMessage(v: unknown): Message }> = {
  [TIME]: { toJson: (m) => timeToJson(m, false), toMessage: (v) => timeToMessage(v, false) },
  [MICRO_TIME]: { toJson: (m) => timeToJson(m, true), toMessage: (v) => timeToMessage(v, true) },
  [QUANTITY]: { toJson: (m) => m["string"] ?? "", toMessage: (v) => ({ string: String(v) }) },
  [INT_OR_STRING]: {
    toJson: (m) => (toNumber(m["type"] ?? 0) === 1 ? (m["strVal"] ?? "") : toNumber(m["intVal"] ?? 0)),
    toMessage: (v) => (typeof v === "string" ? { type: 1, intVal: 0, strVal: v } : { type: 0, intVal: v, strVal: "" })
  },
  [RAW_EXTENSION]: { toJson: (m) => rawJson(m["raw"]), toMessage: (v) => ({ raw: Buffer.from(JSON.stringify(v)) }) },
  [FIELDS_V1]: { toJson: (m) => rawJson(m["Raw"]), toMessage: (v) => ({ Raw: Buffer.from(JSON.stringify(v)) }) }
}

const isZero = (v: unknown): boolean =>
  v === "" ||
  v === 0 ||
  v === false ||
  (v instanceof Uint8Array && v.length === 0) ||
  (typeof v === "object" && v !== null && "isZero" in v && (v as { isZero(): boolean }).isZero())

const resolvedOf = (f: protobufjs.Field): protobufjs.Type | undefined => {
  const r = f.resolve().resolvedType
  return r instanceof protobufjs.Type ? r : undefined
}

/** One value of a field (an element of a repeated field or map) as JSON. */
const valueToJson = (f: protobufjs.Field, type: protobufjs.Type | undefined, v: unknown): unknown => {
  if (type !== undefined) {
    const s = special[type.fullName]
    return s !== undefined ? s.toJson(v as Message) : messageToJson(type, v as Message)
  }
  if (f.type === "bytes") return Buffer.from(v as Uint8Array).toString("base64")
  if (typeof v === "object" && v !== null) return toNumber(v) // Long
  return v
}

/** A decoded message as Go's JSON of its struct. */
export const messageToJson = (type: protobufjs.Type, m: Message): Json => {
  const out: Json = {}
  for (const f of type.fieldsArray) {
    const v = m[f.name]
    const t = resolvedOf(f)
    if (f.map) {
      const entries = Object.entries((v ?? {}) as Record<string, unknown>)
      if (entries.length === 0) continue
      out[f.name] = Object.fromEntries(entries.map(([k, x]) => [k, valueToJson(f, t, x)]))
    } else if (f.repeated) {
      const xs = (v ?? []) as Array<unknown>
      if (xs.length === 0 && !(f.name === "items" && type.name.endsWith("List"))) continue
      out[f.name] = xs.map((x) => valueToJson(f, t, x))
    } else if (has(m, f.name)) {
      const full = `${type.fullName.slice(1)}.${f.name}`
      if (t === undefined && isZero(v) && !POINTERS.has(full) && !NOT_OMITTED.has(full)) continue
      out[f.name] = valueToJson(f, t, v)
    }
  }
  return out
}

/** One JSON value as what protobufjs encodes for the field. */
const valueToMessage = (f: protobufjs.Field, type: protobufjs.Type | undefined, v: unknown): unknown => {
  if (type !== undefined) {
    const s = special[type.fullName]
    return s !== undefined ? s.toMessage(v) : jsonToMessage(type, v as Json)
  }
  if (f.type === "bytes") return Buffer.from(String(v), "base64")
  return v
}

/** Go's JSON of a struct as the plain object protobufjs encodes (fields absent or null: not sent; a null time: Go's zero time). */
export const jsonToMessage = (type: protobufjs.Type, json: Json): Message => {
  const out: Message = {}
  for (const f of type.fieldsArray) {
    const v = json[f.name]
    const t = resolvedOf(f)
    if (v === undefined) continue
    if (v === null) {
      // a null metav1.Time is Go's zero time: an empty message on the wire
      if (t !== undefined && (t.fullName === TIME || t.fullName === MICRO_TIME)) out[f.name] = {}
      continue
    }
    if (f.map) {
      out[f.name] = Object.fromEntries(Object.entries(v as Json).map(([k, x]) => [k, valueToMessage(f, t, x)]))
    } else if (f.repeated) {
      out[f.name] = (v as Array<unknown>).map((x) => valueToMessage(f, t, x))
    } else {
      out[f.name] = valueToMessage(f, t, v)
    }
  }
  return out
}
