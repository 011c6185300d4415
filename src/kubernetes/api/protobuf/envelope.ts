/**
 * apimachinery's protobuf serializer (runtime/serializer/protobuf): an object is `k8s\0` and a
 * runtime.Unknown whose typeMeta names its apiVersion and kind and whose raw is the kind's message;
 * a watch event is a 4-byte big-endian length and a meta.v1.WatchEvent written by the raw
 * serializer (no prefix, no envelope) whose object.raw is the full encoding of the object.
 */
import { Either } from "effect"
import protobufjs from "protobufjs"
import { jsonToMessage, messageToJson } from "./go-message.js"
import { lookupMessage, messageOf, UNKNOWN, WATCH_EVENT } from "./messages.js"

/** protoEncodingPrefix */
export const PROTOBUF_PREFIX = Uint8Array.of(0x6b, 0x38, 0x73, 0x00)

export const PROTOBUF_TYPE = "application/vnd.kubernetes.protobuf"
export const PROTOBUF_WATCH_TYPE = "application/vnd.kubernetes.protobuf;stream=watch"

/** an object with its apiVersion and kind (KubeObject, KubeList, Status, a JSON document) */
type Typed = object & { readonly apiVersion?: unknown; readonly kind?: unknown }

/** An object with no message: errNotMarshalable (a 406 NotAcceptable where it is answered). */
export class NotMarshalable extends Error {
  constructor(goType: string) {
    super(
      `object ${goType} does not implement the protobuf marshalling interface and cannot be encoded to a protobuf message`
    )
  }
}

/** The object's own message bytes (what Unknown.raw holds). */
export const encodeMessage = <T extends Typed>(obj: T): Uint8Array | undefined => {
  const type = messageOf(String(obj.apiVersion ?? ""), String(obj.kind ?? ""))
  if (type === undefined) return undefined
  return type.encode(jsonToMessage(type, obj as Record<string, unknown>)).finish()
}

/** `k8s\0` + Unknown{typeMeta, raw} of an object (Serializer.doEncode); NotMarshalable without a message. */
export const encodeProtobuf = <T extends Typed>(obj: T, goType = "*unstructured.Unstructured"): Uint8Array => {
  const raw = encodeMessage(obj)
  if (raw === undefined) throw new NotMarshalable(goType)
  return envelope(String(obj.apiVersion ?? ""), String(obj.kind ?? ""), raw)
}

/**
 * A list from its items' messages (each encoded once elsewhere and reused): every List message is
 * `{ListMeta metadata = 1; repeated <Item> items = 2}`.
 */
export const encodeProtobufList = (
  apiVersion: string,
  kind: string,
  metadata: Record<string, unknown>,
  items: ReadonlyArray<Uint8Array>
): Uint8Array => {
  const type = messageOf(apiVersion, kind)
  if (type === undefined) throw new NotMarshalable("*unstructured.UnstructuredList")
  const listMeta = type.fields["metadata"]!.resolve().resolvedType as protobufjs.Type
  const w = protobufjs.Writer.create()
  listMeta.encode(jsonToMessage(listMeta, metadata), w.uint32((1 << 3) | 2).fork()).ldelim()
  for (const item of items) w.uint32((2 << 3) | 2).bytes(item)
  return envelope(apiVersion, kind, w.finish())
}

const envelope = (apiVersion: string, kind: string, raw: Uint8Array): Uint8Array => {
  const body = lookupMessage(UNKNOWN)
    .encode({
      typeMeta: { apiVersion, kind },
      raw,
      contentEncoding: "",
      contentType: ""
    })
    .finish()
  const out = new Uint8Array(4 + body.length)
  out.set(PROTOBUF_PREFIX, 0)
  out.set(body, 4)
  return out
}

/** One watch frame: length (4 bytes, big-endian) + WatchEvent{type, object: {raw: the object's full encoding}}. */
export const watchFrame = (type: string, objectBytes: Uint8Array): Uint8Array => {
  const body = lookupMessage(WATCH_EVENT)
    .encode({ type, object: { raw: objectBytes } })
    .finish()
  const out = new Uint8Array(4 + body.length)
  new DataView(out.buffer).setUint32(0, body.length)
  out.set(body, 4)
  return out
}

/** A decode failure: the text, and the apiVersion and kind when they were read (the apiserver's message then names them). */
export interface ProtobufDecodeError {
  readonly message: string
  readonly gvk?: { readonly apiVersion: string; readonly kind: string }
}

/** gogo's texts for what protobufjs reports in its own words. */
const goProtoError = (e: unknown): string => {
  const m = e instanceof Error ? e.message : String(e)
  if (m.startsWith("index out of range")) return "unexpected EOF"
  const wire = /^invalid wire type (\d+)/.exec(m)
  if (wire !== null) return `proto: illegal wireType ${wire[1]}`
  return m
}

export interface Expected {
  readonly apiVersion: string
  readonly kind: string
  /** a custom resource: unstructured, which protobuf cannot decode into */
  readonly custom: boolean
}

/**
 * Serializer.Decode into the endpoint's type: the prefix, the envelope, the apiVersion and kind
 * (defaulted to the endpoint's when unset), then the kind's message as Go's JSON with them.
 */
export const decodeProtobuf = (
  bytes: Uint8Array,
  expected: Expected
): Either.Either<Record<string, unknown>, ProtobufDecodeError> => {
  if (bytes.length === 0) return Either.left({ message: "empty data" })
  if (bytes.length < 4 || PROTOBUF_PREFIX.some((b, i) => bytes[i] !== b))
    return Either.left({
      message: "provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]"
    })
  if (bytes.length === 4) return Either.left({ message: "empty body" })
  let envelope: { typeMeta?: { apiVersion?: string; kind?: string }; raw?: Uint8Array }
  try {
    envelope = lookupMessage(UNKNOWN).decode(bytes.subarray(4)) as typeof envelope
  } catch (e) {
    return Either.left({ message: goProtoError(e) })
  }
  const apiVersion = envelope.typeMeta?.apiVersion || expected.apiVersion
  const kind = envelope.typeMeta?.kind || expected.kind
  const gvk = { apiVersion, kind }
  if (expected.custom) return Either.left({ message: new NotMarshalable("*unstructured.Unstructured").message, gvk })
  const type = messageOf(apiVersion, kind)
  if (type === undefined)
    return Either.left({
      message: `no kind ${JSON.stringify(kind)} is registered for version ${JSON.stringify(apiVersion)} in scheme "pkg/api/legacyscheme/scheme.go:30"`,
      gvk
    })
  try {
    const message = type.decode(envelope.raw ?? new Uint8Array()) as unknown as Record<string, unknown>
    return Either.right({ apiVersion, kind, ...messageToJson(type, message) })
  } catch (e) {
    return Either.left({ message: goProtoError(e), gvk })
  }
}
