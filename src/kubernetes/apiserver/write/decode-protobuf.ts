/**
 * `application/vnd.kubernetes.protobuf` request bodies of the built-in kinds (what typed clients
 * such as `kubectl create secret|configmap|namespace` send): the `k8s\0` prefix, the
 * runtime.Unknown envelope, and the kind's message from k8s.io/api's generated.proto (protobufjs)
 * turned into the JSON document the rest of the pipeline decodes — as Go would see the object
 * after unmarshalling it (zero values absent, times in RFC 3339, bytes in base64). Protobuf has no
 * strict mode. Issue 27 extends this decoder (more kinds) and adds protobuf responses.
 */
import { Either } from "effect"
import protobufjs from "protobufjs"
import type { BodyDecoder } from "./body-decoder.js"

const PROTO = `
syntax = "proto2";
package k8s;
message TypeMeta { optional string apiVersion = 1; optional string kind = 2; }
message Unknown { optional TypeMeta typeMeta = 1; optional bytes raw = 2; optional string contentEncoding = 3; optional string contentType = 4; }
message Time { optional int64 seconds = 1; optional int32 nanos = 2; }
message FieldsV1 { optional bytes Raw = 1; }
message OwnerReference {
  optional string apiVersion = 5; optional string kind = 1; optional string name = 3; optional string uid = 4;
  optional bool controller = 6; optional bool blockOwnerDeletion = 7;
}
message ManagedFieldsEntry {
  optional string manager = 1; optional string operation = 2; optional string apiVersion = 3; optional Time time = 4;
  optional string fieldsType = 6; optional FieldsV1 fieldsV1 = 7; optional string subresource = 8;
}
message ObjectMeta {
  optional string name = 1; optional string generateName = 2; optional string namespace = 3; optional string selfLink = 4;
  optional string uid = 5; optional string resourceVersion = 6; optional int64 generation = 7;
  optional Time creationTimestamp = 8; optional Time deletionTimestamp = 9; optional int64 deletionGracePeriodSeconds = 10;
  map<string, string> labels = 11; map<string, string> annotations = 12;
  repeated OwnerReference ownerReferences = 13; repeated string finalizers = 14; repeated ManagedFieldsEntry managedFields = 17;
}
message ConfigMap { optional ObjectMeta metadata = 1; optional bool immutable = 4; map<string, string> data = 2; map<string, bytes> binaryData = 3; }
message Secret { optional ObjectMeta metadata = 1; optional bool immutable = 5; map<string, bytes> data = 2; map<string, string> stringData = 4; optional string type = 3; }
message NamespaceCondition { optional string type = 1; optional string status = 2; optional Time lastTransitionTime = 4; optional string reason = 5; optional string message = 6; }
message NamespaceSpec { repeated string finalizers = 1; }
message NamespaceStatus { optional string phase = 1; repeated NamespaceCondition conditions = 2; }
message Namespace { optional ObjectMeta metadata = 1; optional NamespaceSpec spec = 2; optional NamespaceStatus status = 3; }
`

const root = protobufjs.parse(PROTO, { keepCase: true }).root
const Unknown = root.lookupType("k8s.Unknown")
/** the kinds a body may be (v1, by kind) */
const messages: Record<string, protobufjs.Type> = {
  ConfigMap: root.lookupType("k8s.ConfigMap"),
  Secret: root.lookupType("k8s.Secret"),
  Namespace: root.lookupType("k8s.Namespace")
}

/** protoEncodingPrefix */
const PREFIX = [0x6b, 0x38, 0x73, 0x00]

/** metav1.Time from {seconds, nanos}: RFC 3339 in UTC (the zero time: absent) */
const time = (t: { seconds?: number; nanos?: number }): string | undefined => {
  const s = Number(t.seconds ?? 0)
  if (s === 0 && (t.nanos ?? 0) === 0) return undefined
  return new Date(s * 1000).toISOString().replace(/\.\d{3}Z$/, "Z")
}

const TIME_FIELDS = new Set(["creationTimestamp", "deletionTimestamp", "time", "lastTransitionTime"])
/** the map fields: their entries are kept as they are ("" is a value) */
const MAP_FIELDS = new Set(["labels", "annotations", "data", "binaryData", "stringData"])

/** Go's view after unmarshalling: zero values left out (omitempty), times as RFC 3339, fieldsV1 as its JSON. */
const goView = (u: unknown, key = ""): unknown => {
  if (Array.isArray(u)) return u.map((x) => goView(x))
  if (u === null || typeof u !== "object") return u
  if (TIME_FIELDS.has(key)) return time(u as { seconds?: number; nanos?: number })
  if (MAP_FIELDS.has(key)) return Object.keys(u).length === 0 ? undefined : { ...u }
  if (key === "fieldsV1") {
    const raw = (u as { Raw?: string }).Raw
    return raw === undefined ? undefined : (JSON.parse(Buffer.from(raw, "base64").toString("utf8")) as unknown)
  }
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(u)) {
    const g = goView(v, k)
    if (g === undefined || g === "" || (typeof g === "number" && g === 0 && k !== "immutable")) continue
    if (Array.isArray(g) && g.length === 0) continue
    if (typeof g === "object" && g !== null && !Array.isArray(g) && Object.keys(g).length === 0) continue
    out[k] = g
  }
  return out
}

export const protobufDecoder: BodyDecoder = {
  mediaTypes: ["application/vnd.kubernetes.protobuf"],
  decode: (bytes) => {
    if (bytes.length === 0) return Either.left("empty body")
    if (bytes.length < 4 || PREFIX.some((b, i) => bytes[i] !== b))
      return Either.left("provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]")
    try {
      const envelope = Unknown.toObject(Unknown.decode(bytes.subarray(4)), { bytes: Buffer }) as {
        typeMeta?: { apiVersion?: string; kind?: string }
        raw?: Uint8Array
      }
      const kind = envelope.typeMeta?.kind ?? ""
      const type = messages[kind]
      if (type === undefined)
        return Either.left(`no kind ${JSON.stringify(kind)} is registered for the protobuf body of this server`)
      const obj = type.toObject(type.decode(envelope.raw ?? new Uint8Array()), {
        bytes: String,
        longs: Number,
        defaults: false
      })
      const doc = goView(obj) as Record<string, unknown>
      return Either.right({
        value: { apiVersion: envelope.typeMeta?.apiVersion ?? "", kind, ...doc },
        strict: [],
        offsets: new Map()
      })
    } catch (e) {
      return Either.left(e instanceof Error ? e.message : String(e))
    }
  }
}
