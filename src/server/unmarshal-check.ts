/**
 * Request bodies checked as etcd 3.4 decodes them, before protobufjs does: etcd's messages are
 * gogo/protobuf generated code, whose `Unmarshal` refuses what protobufjs lets through (a field
 * number 0, a wrong wire type for a known field, an end-group tag outside a group, illegal wire
 * types 6 and 7) and words every refusal its own way; grpc-go then answers a unary call with code
 * INTERNAL "grpc: error unmarshalling request: <that error>". `checkUnmarshal` walks the bytes as
 * the generated code does (field by field, into nested messages, skipping unknown fields with
 * gogo's skipRpc) and returns gogo's error text, or undefined when etcd would accept the body.
 * Strings are not checked for UTF-8: gogo does not check them.
 *
 * The tables are built once per message type from proto-loader's descriptors; the walk is plain
 * (no allocation on the common path, varints as numbers unless they are longer than 7 bytes).
 */
import type * as protoLoader from "@grpc/proto-loader"

const ErrUnexpectedEOF = "unexpected EOF"
const ErrIntOverflow = "proto: integer overflow"
const ErrInvalidLength = "proto: negative length found during unmarshaling"
const ErrUnexpectedEndOfGroup = "proto: unexpected end of group"

type Kind = "varint" | "fixed64" | "fixed32" | "bytes" | "message"

interface FieldRule {
  /** the Go field name, as gogo's errors name it ("RangeEnd") */
  readonly goName: string
  readonly kind: Kind
  /** repeated numeric: packed (wire type 2) or not (its own wire type) */
  readonly packable: boolean
  readonly message: (() => MessageRule) | undefined
  /** a varint's Go type, which says what gogo keeps of a long varint */
  readonly width: Width
}

type Width = "bool" | "int32" | "uint32" | "64"

const widthOf = (type: string): Width =>
  type === "TYPE_BOOL"
    ? "bool"
    : type === "TYPE_INT32" || type === "TYPE_ENUM"
      ? "int32"
      : type === "TYPE_UINT32"
        ? "uint32"
        : "64"

export interface MessageRule {
  readonly name: string
  readonly fields: ReadonlyMap<number, FieldRule>
}

/** protoc-gen-go's CamelCase: "range_end" → "RangeEnd", "ID" → "ID", "peerURLs" → "PeerURLs". */
export const goFieldName = (name: string): string => {
  let out = ""
  for (let i = 0; i < name.length; i++) {
    const c = name[i]!
    if (c === "_" && i + 1 < name.length && /[a-z]/.test(name[i + 1]!)) {
      out += name[i + 1]!.toUpperCase()
      i++
    } else out += i === 0 ? c.toUpperCase() : c
  }
  return out
}

const kindOf = (type: string): Kind => {
  switch (type) {
    case "TYPE_FIXED64":
    case "TYPE_SFIXED64":
    case "TYPE_DOUBLE":
      return "fixed64"
    case "TYPE_FIXED32":
    case "TYPE_SFIXED32":
    case "TYPE_FLOAT":
      return "fixed32"
    case "TYPE_STRING":
    case "TYPE_BYTES":
      return "bytes"
    case "TYPE_MESSAGE":
      return "message"
    default:
      return "varint"
  }
}

const WIRE: Record<Kind, number> = { varint: 0, fixed64: 1, fixed32: 5, bytes: 2, message: 2 }

interface Descriptor {
  readonly name: string
  readonly field: ReadonlyArray<{ name: string; number: number; label: string; type: string; typeName: string }>
}

/** The rules of every message type in `definition`, by full name ("etcdserverpb.RangeRequest"). */
export const makeRules = (definition: protoLoader.PackageDefinition) => {
  const cache = new Map<string, MessageRule>()
  const descriptor = (fullName: string): Descriptor | undefined => {
    const def = definition[fullName] as { type?: Descriptor } | undefined
    return def?.type !== undefined && "field" in def.type ? def.type : undefined
  }
  const resolve = (from: string, typeName: string): string => {
    const pkg = from.slice(0, from.lastIndexOf("."))
    for (const candidate of [typeName.replace(/^\./, ""), `${pkg}.${typeName}`]) {
      if (descriptor(candidate) !== undefined) return candidate
    }
    throw new Error(`etcd-effect: unknown message type ${typeName} (from ${from})`)
  }
  const rule = (fullName: string): MessageRule => {
    const cached = cache.get(fullName)
    if (cached !== undefined) return cached
    const d = descriptor(fullName)
    if (d === undefined) throw new Error(`etcd-effect: no message type ${fullName}`)
    const fields = new Map<number, FieldRule>()
    const r: MessageRule = { name: d.name, fields }
    cache.set(fullName, r)
    for (const f of d.field) {
      const kind = kindOf(f.type)
      const nested = kind === "message" ? resolve(fullName, f.typeName) : undefined
      fields.set(f.number, {
        goName: goFieldName(f.name),
        kind,
        packable: f.label === "LABEL_REPEATED" && (kind === "varint" || kind === "fixed32" || kind === "fixed64"),
        message: nested === undefined ? undefined : () => rule(nested),
        width: widthOf(f.type)
      })
    }
    return r
  }
  return rule
}

/**
 * Set by a check that met what gogo accepts but protobufjs reads differently: an unknown field
 * (protobufjs misreads tags longer than 5 bytes) or a varint with padding bytes. Such a body is
 * rewritten canonically (`canonical`) before protobufjs decodes it.
 */
let dirty = false

/** A decoded varint: the value and where it ends, or an error. Lengths are int64 as in Go. */
let vEnd = 0
let vNum = 0
/** set when the varint needed more than 7 bytes: its exact value */
let vBig: bigint | undefined

/** Reads a varint at `i` into vNum/vBig/vEnd; an error text or undefined. */
const readVarint = (buf: Uint8Array, i: number, l: number): string | undefined => {
  let value = 0
  let mul = 1
  for (let n = 0; n < 7; n++) {
    if (i >= l) return ErrUnexpectedEOF
    const b = buf[i++]!
    value += (b & 0x7f) * mul
    if (b < 0x80) {
      if (b === 0 && n > 0) dirty = true
      vNum = value
      vBig = undefined
      vEnd = i
      return undefined
    }
    mul *= 128
  }
  // long varints (8..10 bytes): exactly, as Go's uint64 with shifts past 64 dropped
  let big = BigInt(value)
  for (let shift = 49n; ; shift += 7n) {
    if (shift >= 64n) return ErrIntOverflow
    if (i >= l) return ErrUnexpectedEOF
    const b = buf[i++]!
    big |= BigInt(b & 0x7f) << shift
    if (b < 0x80) {
      if (b === 0) dirty = true
      break
    }
  }
  big = BigInt.asUintN(64, big)
  vBig = big
  vNum = Number(big)
  vEnd = i
  return undefined
}

/** A length as Go's int: negative when the uint64 has its top bit set. */
const lengthOf = (): number => (vBig !== undefined && vBig >= 1n << 63n ? -1 : vNum)

const INT64_LIMIT = 1n << 63n
/** i + the length just read, as Go's int: -1 when it overflows (then Go sees a negative index). */
const addLength = (i: number): number =>
  vBig === undefined ? i + vNum : BigInt(i) + vBig >= INT64_LIMIT ? -1 : i + vNum

/** gogo's skipRpc over buf[start, l): the end index, or an error text (as a string). */
const skip = (buf: Uint8Array, start: number, l: number): number | string => {
  let i = start
  let depth = 0
  while (i < l) {
    const e = readVarint(buf, i, l)
    if (e !== undefined) return e
    i = vEnd
    const wireType = vBig !== undefined ? Number(vBig & 7n) : vNum % 8
    switch (wireType) {
      case 0:
        for (let shift = 0; ; shift += 7) {
          if (shift >= 64) return ErrIntOverflow
          if (i >= l) return ErrUnexpectedEOF
          if (buf[i++]! < 0x80) break
        }
        break
      case 1:
        i += 8
        break
      case 2: {
        const e2 = readVarint(buf, i, l)
        if (e2 !== undefined) return e2
        i = vEnd
        if (lengthOf() < 0) return ErrInvalidLength
        i = addLength(i)
        if (i < 0) return ErrInvalidLength
        break
      }
      case 3:
        depth++
        break
      case 4:
        if (depth === 0) return ErrUnexpectedEndOfGroup
        depth--
        break
      case 5:
        i += 4
        break
      default:
        return `proto: illegal wireType ${wireType}`
    }
    if (depth === 0) return i
  }
  return ErrUnexpectedEOF
}

/** gogo's generated Unmarshal for `rule` over buf[start, l): an error text, or undefined. */
const unmarshal = (rule: MessageRule, buf: Uint8Array, start: number, l: number): string | undefined => {
  let i = start
  while (i < l) {
    const pre = i
    const e = readVarint(buf, i, l)
    if (e !== undefined) return e
    i = vEnd
    let wireType: number
    let fieldNum: number
    if (vBig === undefined) {
      wireType = vNum % 8
      fieldNum = Math.floor(vNum / 8) | 0
    } else {
      wireType = Number(vBig & 7n)
      fieldNum = Number(BigInt.asIntN(32, vBig >> 3n))
    }
    if (wireType === 4) return `proto: ${rule.name}: wiretype end group for non-group`
    if (fieldNum <= 0) {
      const wire = vBig !== undefined ? vBig.toString() : String(vNum)
      return `proto: ${rule.name}: illegal tag ${fieldNum} (wire type ${wire})`
    }
    const field = rule.fields.get(fieldNum)
    if (field === undefined) {
      dirty = true
      const end = skip(buf, pre, l)
      if (typeof end === "string") return end
      if (end > l) return ErrUnexpectedEOF
      i = end
      continue
    }
    const expected = WIRE[field.kind]
    if (wireType !== expected && !(field.packable && wireType === 2)) {
      return `proto: wrong wireType = ${wireType} for field ${field.goName}`
    }
    if (wireType === 2) {
      const e2 = readVarint(buf, i, l)
      if (e2 !== undefined) return e2
      i = vEnd
      if (lengthOf() < 0) return ErrInvalidLength
      const post = addLength(i)
      if (post < 0) return ErrInvalidLength
      if (post > l) return ErrUnexpectedEOF
      if (field.kind === "message") {
        const inner = unmarshal(field.message!(), buf, i, post)
        if (inner !== undefined) return inner
        i = post
      } else if (field.packable) {
        // packed numerics; as the generated code, each element may read up to the end of the
        // whole message (not of the packed run), and parsing goes on from where the last ended
        const n = field.kind === "fixed64" ? 8 : field.kind === "fixed32" ? 4 : 0
        let j = i
        while (j < post) {
          if (n > 0) {
            j += n
            if (j > l) return ErrUnexpectedEOF
          } else {
            const e3 = readVarint(buf, j, l)
            if (e3 !== undefined) return e3
            if (field.width !== "64" && vEnd - j > 5) dirty = true
            j = vEnd
          }
        }
        i = j
      } else {
        i = post
      }
    } else if (wireType === 0) {
      const e2 = readVarint(buf, i, l)
      if (e2 !== undefined) return e2
      // protobufjs reads a 32-bit field's varint as 5 bytes or 10: anything longer is rewritten
      if (field.width !== "64" && vEnd - i > 5) dirty = true
      i = vEnd
    } else {
      i += wireType === 1 ? 8 : 4
      if (i > l) return ErrUnexpectedEOF
    }
  }
  if (i > l) return ErrUnexpectedEOF
  return undefined
}

/** etcd 3.4's refusal of a request body, or undefined when it would decode it. */
export const checkUnmarshal = (rule: MessageRule, body: Uint8Array): string | undefined => {
  dirty = false
  const e = unmarshal(rule, body, 0, body.length)
  return e === undefined ? undefined : `grpc: error unmarshalling request: ${e}`
}

/** Whether the body last checked (and accepted) needs `canonical` before protobufjs reads it. */
export const needsCanonical = (): boolean => dirty

const pushVarint = (out: Array<number>, v: bigint | number): void => {
  if (typeof v === "number" && v < 2 ** 31) {
    while (v >= 0x80) {
      out.push((v & 0x7f) | 0x80)
      v >>>= 7
    }
    out.push(v)
    return
  }
  let b = BigInt(v)
  while (b >= 0x80n) {
    out.push(Number(b & 0x7fn) | 0x80)
    b >>= 7n
  }
  out.push(Number(b))
}

/**
 * A varint as gogo keeps it for its field's Go type, written so protobufjs reads the same: a bool
 * is 0 or 1, an int32/enum the low 32 bits (negative: the 10-byte form), a uint32 the low 32
 * bits. (protobufjs reads a 32-bit varint as 5 bytes or 10, and a 6- to 9-byte one wrongly.)
 */
const fieldVarint = (width: Width, v: bigint | number): bigint | number => {
  switch (width) {
    case "bool":
      return v === 0 || v === 0n ? 0 : 1
    case "int32": {
      const x = BigInt.asIntN(32, BigInt(v))
      return x < 0n ? BigInt.asUintN(64, x) : x
    }
    case "uint32":
      return BigInt.asUintN(32, BigInt(v))
    default:
      return v
  }
}

/**
 * A body gogo accepted, written the way protobufjs reads it as gogo did: known fields with
 * minimal varints (cut to their Go type's width), nested messages rewritten, unknown fields dropped (etcd's messages keep no
 * unrecognized fields). Only called after `checkUnmarshal` passed, so it meets no errors.
 */
const rewrite = (rule: MessageRule, buf: Uint8Array, start: number, l: number, out: Array<number>): void => {
  let i = start
  while (i < l) {
    const pre = i
    readVarint(buf, i, l)
    i = vEnd
    const wireType = vBig !== undefined ? Number(vBig & 7n) : vNum % 8
    const fieldNum = vBig !== undefined ? Number(BigInt.asIntN(32, vBig >> 3n)) : Math.floor(vNum / 8) | 0
    const field = rule.fields.get(fieldNum)
    if (field === undefined) {
      i = skip(buf, pre, l) as number
      continue
    }
    pushVarint(out, fieldNum * 8 + wireType)
    if (wireType === 0) {
      readVarint(buf, i, l)
      i = vEnd
      pushVarint(out, fieldVarint(field.width, vBig ?? vNum))
    } else if (wireType === 1 || wireType === 5) {
      const n = wireType === 1 ? 8 : 4
      for (let k = 0; k < n; k++) out.push(buf[i + k]!)
      i += n
    } else {
      readVarint(buf, i, l)
      i = vEnd
      const post = i + vNum
      if (field.kind === "message") {
        const inner: Array<number> = []
        rewrite(field.message!(), buf, i, post, inner)
        pushVarint(out, inner.length)
        for (const b of inner) out.push(b)
        i = post
      } else if (field.packable) {
        const inner: Array<number> = []
        const n = field.kind === "fixed64" ? 8 : field.kind === "fixed32" ? 4 : 0
        let j = i
        while (j < post) {
          if (n > 0) {
            for (let k = 0; k < n; k++) inner.push(buf[j + k]!)
            j += n
          } else {
            readVarint(buf, j, l)
            j = vEnd
            pushVarint(inner, fieldVarint(field.width, vBig ?? vNum))
          }
        }
        pushVarint(out, inner.length)
        for (const b of inner) out.push(b)
        i = j
      } else {
        pushVarint(out, vNum)
        for (let k = i; k < post; k++) out.push(buf[k]!)
        i = post
      }
    }
  }
}

/** The canonical form of an accepted body (see `rewrite`). */
export const canonical = (rule: MessageRule, body: Uint8Array): Buffer => {
  const out: Array<number> = []
  rewrite(rule, body, 0, body.length, out)
  return Buffer.from(out)
}

/** What a refused body decodes to: the call answers INTERNAL with `message` (grpc-bridge.ts). */
export class MalformedRequest {
  constructor(readonly message: string) {}
}

/**
 * The service definition with the request deserializer of each unary method and each client
 * stream (Watch, LeaseKeepAlive) checking the body first: a body etcd refuses decodes to a
 * MalformedRequest instead of throwing (grpc-js would answer "Error deserializing request"); on a
 * stream, the reader ends the call with it (grpc-bridge.ts `readBatch`), as grpc-go's Recv does.
 */
export const withUnmarshalChecks = (
  definition: Record<
    string,
    {
      readonly path: string
      readonly requestStream: boolean
      readonly responseStream: boolean
      readonly requestDeserialize: (b: Buffer) => unknown
      readonly requestType?: { readonly type?: { readonly name?: string } }
    }
  >,
  packageDefinition: protoLoader.PackageDefinition
): typeof definition => {
  const rules = makeRules(packageDefinition)
  const out: typeof definition = {}
  for (const [method, def] of Object.entries(definition)) {
    // "/etcdserverpb.KV/Range" → "etcdserverpb" + "RangeRequest"
    const pkg = def.path.slice(1, def.path.indexOf("/", 1)).replace(/\.[^.]*$/, "")
    const simple = def.requestType?.type?.name
    const typeName = simple === undefined ? undefined : `${pkg}.${simple}`
    // a server stream's one request (Snapshot) is left to its handler
    const serverStreamOnly = def.responseStream && !def.requestStream
    if (serverStreamOnly || typeName === undefined || packageDefinition[typeName] === undefined) {
      out[method] = def
      continue
    }
    const rule = rules(typeName)
    const decode = def.requestDeserialize
    out[method] = {
      ...def,
      requestDeserialize: (body: Buffer) => {
        const refused = checkUnmarshal(rule, body)
        if (refused !== undefined) return new MalformedRequest(refused)
        return decode(needsCanonical() ? canonical(rule, body) : body)
      }
    }
  }
  return out
}

/**
 * Unary handlers that do not go through the call runner (the "not implemented" answers) refuse a
 * malformed body first, as grpc-go decodes before any handler runs.
 */
export const refuseMalformed = (
  definition: Record<string, { readonly requestStream: boolean; readonly responseStream: boolean }>,
  handlers: Record<string, unknown>
): Record<string, unknown> => {
  const out: Record<string, unknown> = {}
  for (const [method, handler] of Object.entries(handlers)) {
    const def = definition[method]
    if (typeof handler !== "function" || def === undefined || def.requestStream || def.responseStream) {
      out[method] = handler
      continue
    }
    const unary = handler as (call: { request: unknown }, callback: (e: unknown, r?: unknown) => void) => void
    out[method] = (call: { request: unknown }, callback: (e: unknown, r?: unknown) => void) =>
      call.request instanceof MalformedRequest
        ? callback({ code: 13, details: call.request.message })
        : unary(call, callback)
  }
  return out
}
