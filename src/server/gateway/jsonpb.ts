/**
 * The gateway's message codec: golang/protobuf's jsonpb as etcd 3.4's grpc-gateway configures it
 * (runtime.JSONPb{OrigName: true}, unknown fields allowed).
 *
 * Reading (`requestSchema`): an effect/Schema per message type, built from the proto descriptor,
 * that decodes a JSON value (json-scanner.ts) into the object protobufjs encodes — proto or
 * lowerCamel field names (camel wins when both), null as unset, int64/int32 as numbers or strings
 * with digits, bytes as padded base64, enums by name or number, unknown fields ignored — and fails
 * with jsonpb's / encoding/json's error text for anything else. The first failure in field order
 * is the one reported, as jsonpb stops at it.
 *
 * Writing (`marshal`): a decoded protobufjs message as jsonpb writes it: proto field names in
 * declaration order, zero values and empty lists left out, 64-bit integers as strings, bytes as
 * base64, enums by name, strings escaped as Go's encoding/json does (HTML-safe).
 */
import { Either, ParseResult, Schema } from "effect"
import protobufjs from "protobufjs"
import { join } from "node:path"
import { protoDir } from "../../proto/load.js"
import { Base64Error, decodeStdBase64 } from "./base64.js"
import { type JsonValue, JsonSyntaxError, unmarshal } from "./json-scanner.js"

let loaded: protobufjs.Root | undefined

/**
 * etcdserverpb, mvccpb and authpb as protobufjs reflection (field order, types, enums), parsed on
 * first use: a program that never sees a gateway request does not pay for it.
 */
export const root = (): protobufjs.Root => {
  if (loaded === undefined) {
    loaded = new protobufjs.Root().loadSync(join(protoDir, "rpc.proto"), { keepCase: true })
    loaded.resolveAll()
  }
  return loaded
}

/** A message type by full name ("etcdserverpb.RangeRequest"). */
export const messageType = (name: string): protobufjs.Type => root().lookupType(name)

// ---------------------------------------------------------------------------------------------
// reading

const JsonValueSchema = Schema.declare(
  (u: unknown): u is JsonValue => typeof u === "object" && u !== null && "_tag" in u && "raw" in u,
  { identifier: "JsonValue" }
)

/** encoding/json's name of a JSON value's kind in "cannot unmarshal X into …". */
const kindName = (v: JsonValue): string => (v._tag === "bool" ? "bool" : v._tag)

const cannotUnmarshal = (what: string, goType: string) =>
  `json: cannot unmarshal ${what} into Go value of type ${goType}`

/** A leaf decoder: the value, or Go's error text. */
type Leaf = (v: JsonValue) => unknown | GoError

class GoError {
  constructor(readonly message: string) {}
}

const INT_RANGE: Record<string, readonly [bigint, bigint]> = {
  int64: [-(1n << 63n), (1n << 63n) - 1n],
  uint64: [0n, (1n << 64n) - 1n],
  int32: [-(1n << 31n), (1n << 31n) - 1n],
  uint32: [0n, (1n << 32n) - 1n]
}

/** json.Unmarshal of `v` into a Go integer of `goType` (int64, uint64, int32, uint32, or an enum type). */
const goInteger = (v: JsonValue, goType: string, range: readonly [bigint, bigint]): string | GoError => {
  if (v._tag === "null") return "0"
  if (v._tag !== "number") return new GoError(cannotUnmarshal(kindName(v), goType))
  const signed = range[0] < 0n
  const ok = signed ? /^-?\d+$/.test(v.raw) : /^\d+$/.test(v.raw)
  if (ok) {
    const n = BigInt(v.raw)
    if (n >= range[0] && n <= range[1]) return n.toString()
  }
  return new GoError(cannotUnmarshal(`number ${v.raw}`, goType))
}

/** jsonpb's numbers: a string's text between the quotes is read again as JSON (json.Unmarshal). */
const numeric =
  (goType: string, range: readonly [bigint, bigint]): Leaf =>
  (v) => {
    let value = v
    if (v._tag === "string") {
      const inner = unmarshal(v.raw.slice(1, -1))
      if (inner instanceof JsonSyntaxError) return new GoError(inner.message)
      value = inner
    }
    return goInteger(value, goType, range)
  }

const bool: Leaf = (v) =>
  v._tag === "bool" ? v.value : v._tag === "null" ? false : new GoError(cannotUnmarshal(kindName(v), "bool"))

const string: Leaf = (v) =>
  v._tag === "string" ? v.value : v._tag === "null" ? "" : new GoError(cannotUnmarshal(kindName(v), "string"))

const bytes: Leaf = (v) => {
  if (v._tag === "null") return new Uint8Array(0)
  if (v._tag !== "string") return new GoError(cannotUnmarshal(kindName(v), "[]uint8"))
  const b = decodeStdBase64(v.value)
  return b instanceof Base64Error ? new GoError(b.message) : b
}

/** Go's name of a generated enum type: package, then the nesting joined by "_". */
const goEnumName = (e: protobufjs.Enum): string => {
  const parts = e.fullName.replace(/^\./, "").split(".")
  return `${parts[0]}.${parts.slice(1).join("_")}`
}

const enumLeaf = (e: protobufjs.Enum): Leaf => {
  const name = goEnumName(e)
  return (v) => {
    if (v._tag === "string") {
      // jsonpb takes the raw text between the quotes (no unescaping)
      const s = v.raw.slice(1, -1)
      const n = e.values[s]
      return n === undefined ? new GoError(`unknown value ${JSON.stringify(s)} for enum ${name}`) : n
    }
    const r = goInteger(v, name, INT_RANGE["int32"]!)
    return r instanceof GoError ? r : Number(r)
  }
}

const scalarLeaf = (type: string): Leaf => {
  switch (type) {
    case "int64":
    case "sint64":
    case "sfixed64":
      return numeric("int64", INT_RANGE["int64"]!)
    case "uint64":
    case "fixed64":
      return numeric("uint64", INT_RANGE["uint64"]!)
    case "int32":
    case "sint32":
    case "sfixed32":
      return (v) => {
        const r = numeric("int32", INT_RANGE["int32"]!)(v)
        return r instanceof GoError ? r : Number(r)
      }
    case "uint32":
    case "fixed32":
      return (v) => {
        const r = numeric("uint32", INT_RANGE["uint32"]!)(v)
        return r instanceof GoError ? r : Number(r)
      }
    case "bool":
      return bool
    case "string":
      return string
    case "bytes":
      return bytes
    default:
      throw new Error(`jsonpb: unsupported field type ${type}`)
  }
}

/** A Schema from a JSON value to what `leaf` makes of it; Go's text is the issue's message. */
const leafSchema = (leaf: Leaf): Schema.Schema<unknown, JsonValue> =>
  Schema.transformOrFail(JsonValueSchema, Schema.Unknown, {
    strict: true,
    decode: (v, _, ast) => {
      const r = leaf(v)
      return r instanceof GoError ? ParseResult.fail(new ParseResult.Type(ast, v, r.message)) : ParseResult.succeed(r)
    },
    encode: (a, _, ast) => ParseResult.fail(new ParseResult.Forbidden(ast, a, "the gateway only reads requests"))
  })

/** A repeated field: a JSON array ([]json.RawMessage) of items. */
const listSchema = (item: Schema.Schema<unknown, JsonValue>): Schema.Schema<ReadonlyArray<unknown>, JsonValue> =>
  Schema.transformOrFail(JsonValueSchema, Schema.Array(item), {
    strict: true,
    decode: (v, _, ast) =>
      v._tag === "array"
        ? ParseResult.succeed(v.items)
        : v._tag === "null"
          ? ParseResult.succeed([])
          : ParseResult.fail(new ParseResult.Type(ast, v, cannotUnmarshal(kindName(v), "[]json.RawMessage"))),
    encode: (a, _, ast) => ParseResult.fail(new ParseResult.Forbidden(ast, a, "the gateway only reads requests"))
  })

/** protoc's JSON name: underscores dropped, the letter after one upper-cased. */
const camelName = (name: string): string => name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase())

const schemas = new Map<string, Schema.Schema<any, JsonValue>>()

/**
 * The Schema of a message type: JSON object → the fields protobufjs' `fromObject` takes. Fields
 * decode in declaration order, oneof members after the others (jsonpb's order).
 */
export const requestSchema = (type: protobufjs.Type): Schema.Schema<Record<string, unknown>, JsonValue> => {
  const cached = schemas.get(type.fullName)
  if (cached !== undefined) return cached
  const plain = type.fieldsArray.filter((f) => f.partOf === null)
  const oneofs = type.fieldsArray.filter((f) => f.partOf !== null)
  const ordered = [...plain, ...oneofs]
  const fields: Record<string, Schema.PropertySignature.All> = {}
  for (const f of ordered) {
    const resolved = f.resolve().resolvedType
    const item: Schema.Schema<unknown, JsonValue> =
      resolved instanceof protobufjs.Type
        ? Schema.suspend(() => requestSchema(resolved) as Schema.Schema<unknown, JsonValue>)
        : resolved instanceof protobufjs.Enum
          ? leafSchema(enumLeaf(resolved))
          : leafSchema(scalarLeaf(f.type))
    fields[f.name] = Schema.optionalWith(f.repeated ? listSchema(item) : item, { exact: true })
  }
  const struct = Schema.Struct(fields) as unknown as Schema.Schema<Record<string, unknown>, Record<string, JsonValue>>
  const schema = Schema.transformOrFail(JsonValueSchema, struct, {
    strict: true,
    decode: (v, _, ast) => {
      // json.Unmarshal of null into a map: nothing set
      if (v._tag === "null") return ParseResult.succeed({})
      if (v._tag !== "object") {
        return ParseResult.fail(
          new ParseResult.Type(ast, v, cannotUnmarshal(kindName(v), "map[string]json.RawMessage"))
        )
      }
      const given = new Map<string, JsonValue>()
      for (const [k, value] of v.fields) given.set(k, value) // a repeated key: the last one
      const out: Record<string, JsonValue> = {}
      for (const f of ordered) {
        const camel = camelName(f.name)
        const value = given.get(camel) ?? given.get(f.name)
        // null leaves the field unset (pointers and lists; scalars keep their zero)
        if (value !== undefined && value._tag !== "null") out[f.name] = value
      }
      return ParseResult.succeed(out)
    },
    encode: (a, _, ast) => ParseResult.fail(new ParseResult.Forbidden(ast, a, "the gateway only reads requests"))
  })
  schemas.set(type.fullName, schema)
  return schema
}

/** The first leaf message of a parse issue: jsonpb's error text. */
const issueMessage = (issue: ParseResult.ParseIssue): string => {
  const node = issue as {
    readonly message?: string
    readonly issue?: ParseResult.ParseIssue
    readonly issues?: unknown
  }
  if (node.issue !== undefined) return issueMessage(node.issue)
  if (node.issues !== undefined) {
    const first = Array.isArray(node.issues) ? node.issues[0] : node.issues
    return issueMessage(first as ParseResult.ParseIssue)
  }
  return node.message ?? "invalid value"
}

/** Decodes one JSON value into `type`'s fromObject shape, or jsonpb's error text. */
export const decodeMessage = (
  type: protobufjs.Type,
  value: JsonValue
): Either.Either<Record<string, unknown>, string> => {
  // jsonpb: a top-level null is an empty message
  if (value._tag === "null") return Either.right({})
  return Either.mapLeft(ParseResult.decodeUnknownEither(requestSchema(type))(value, { errors: "first" }), issueMessage)
}

// ---------------------------------------------------------------------------------------------
// writing

/** Go's encoding/json string: HTML-safe (<, >, & escaped) and U+2028/U+2029 escaped. */
export const goJsonString = (s: string): string =>
  JSON.stringify(s).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)

const LONG_TYPES = new Set(["int64", "uint64", "sint64", "fixed64", "sfixed64"])

const longText = (v: unknown): string =>
  typeof v === "number" ? String(v) : typeof v === "string" ? v : (v as { toString(): string }).toString()

const isZero = (f: protobufjs.Field, v: unknown): boolean => {
  if (v === null || v === undefined) return true
  if (f.resolvedType instanceof protobufjs.Type) return false
  if (LONG_TYPES.has(f.type)) return longText(v) === "0"
  if (f.type === "bytes") return (v as Uint8Array).length === 0
  if (typeof v === "number") return v === 0
  if (typeof v === "boolean") return !v
  if (typeof v === "string") return v === ""
  return false
}

const scalarJson = (f: protobufjs.Field, v: unknown): string => {
  const resolved = f.resolvedType
  if (resolved instanceof protobufjs.Enum) {
    const name = resolved.valuesById[v as number]
    return name === undefined ? String(v) : goJsonString(name)
  }
  if (LONG_TYPES.has(f.type)) return `"${longText(v)}"`
  if (f.type === "bytes") return goJsonString(Buffer.from(v as Uint8Array).toString("base64"))
  if (f.type === "string") return goJsonString(v as string)
  return String(v)
}

/** A decoded protobufjs message as jsonpb (OrigName, no defaults) writes it. */
export const marshal = (type: protobufjs.Type, message: Record<string, unknown>): string => {
  let out = "{"
  for (const f of type.fieldsArray) {
    const v = message[f.name]
    if (f.partOf !== null && !Object.prototype.hasOwnProperty.call(message, f.name)) continue
    const resolved = f.resolve().resolvedType
    let text: string
    if (f.repeated) {
      const list = (v ?? []) as ReadonlyArray<unknown>
      if (list.length === 0) continue
      text = `[${list
        .map((item) =>
          resolved instanceof protobufjs.Type ? marshal(resolved, item as Record<string, unknown>) : scalarJson(f, item)
        )
        .join(",")}]`
    } else if (resolved instanceof protobufjs.Type) {
      if (v === null || v === undefined) continue
      text = marshal(resolved, v as Record<string, unknown>)
    } else {
      if (isZero(f, v)) continue
      text = scalarJson(f, v)
    }
    out += `${out.length === 1 ? "" : ","}${goJsonString(f.name)}:${text}`
  }
  return `${out}}`
}
