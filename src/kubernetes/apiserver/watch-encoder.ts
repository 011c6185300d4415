/**
 * The JSON of objects and watch events, encoded once and shared: every watcher of an event gets
 * the same bytes (the watch cache hands each watcher the same object, so the object's identity is
 * the cache key). A watch event is one line, `{"type":…,"object":…}\n` (NDJSON, as the apiserver's
 * JSON framer writes it). DELETED and BOOKMARK events can be fresh objects per watcher (the Cacher
 * shares its DELETED events, the etcd3 watch and the bookmark ticks do not), so they are keyed by
 * what makes them unique (apiVersion and kind — core/v1 and events.k8s.io/v1 Events are one stored
 * object in two shapes —, namespace/name or nothing, and the revision).
 *
 * Protobuf is encoded the same way, once per object and once per event: an object's `k8s\0` +
 * Unknown bytes (`protobufOf`), its message alone for list items (`protobufMessageOf`), and the
 * length-prefixed WatchEvent frame of an event (`protobufEventBytesAs`).
 */
import type { KubeObject } from "../api/object-meta.js"
import { encodeMessage, encodeProtobuf, watchFrame } from "../api/protobuf/envelope.js"
import type { WatchEvent } from "../api/watch-event.js"

const encoder = new TextEncoder()
const objectJson = new WeakMap<object, string>()
const addedLines = new WeakMap<object, Uint8Array>()
const modifiedLines = new WeakMap<object, Uint8Array>()

/** A bounded map: cleared when full (entries are only worth keeping for one fan-out). */
class RecentLines {
  private readonly map = new Map<string, Uint8Array>()
  constructor(private readonly max: number) {}
  get(key: string, make: () => Uint8Array): Uint8Array {
    let v = this.map.get(key)
    if (v === undefined) {
      if (this.map.size >= this.max) this.map.clear()
      v = make()
      this.map.set(key, v)
    }
    return v
  }
}
const recent = new RecentLines(4096)

/** JSON.stringify(obj), once per object. */
export const jsonOf = (obj: object): string => {
  let s = objectJson.get(obj)
  if (s === undefined) {
    s = JSON.stringify(obj)
    objectJson.set(obj, s)
  }
  return s
}

const line = (type: string, objJson: string): Uint8Array => encoder.encode(`{"type":"${type}","object":${objJson}}\n`)

/** One wire encoding of watch events: per-object caches and how an event's bytes are made. */
interface EventEncoding {
  /** tells its entries in `recent` apart from the other encoding's */
  readonly tag: string
  readonly added: WeakMap<object, Uint8Array>
  readonly modified: WeakMap<object, Uint8Array>
  /** an event of an object whose own encoding is cached (watch cache objects are shared) */
  readonly shared: (type: string, obj: KubeObject) => Uint8Array
  /** an event of an object met once */
  readonly fresh: (type: string, obj: KubeObject) => Uint8Array
}

const cachedIn = (map: WeakMap<object, Uint8Array>, make: () => Uint8Array, obj: object): Uint8Array => {
  let b = map.get(obj)
  if (b === undefined) {
    b = make()
    map.set(obj, b)
  }
  return b
}

/** an ADDED or MODIFIED event's bytes, once per object (no closure: this runs per event per watcher) */
const sharedIn = (
  map: WeakMap<object, Uint8Array>,
  enc: EventEncoding,
  type: "ADDED" | "MODIFIED",
  obj: KubeObject
): Uint8Array => {
  let b = map.get(obj)
  if (b === undefined) {
    b = enc.shared(type, obj)
    map.set(obj, b)
  }
  return b
}

const encodeEvent = (enc: EventEncoding, e: WatchEvent): Uint8Array => {
  switch (e.type) {
    case "ADDED":
      return sharedIn(enc.added, enc, "ADDED", e.object)
    case "MODIFIED":
      return sharedIn(enc.modified, enc, "MODIFIED", e.object)
    case "DELETED": {
      const m = e.object.metadata
      return recent.get(
        `${enc.tag}D\u0000${e.object.apiVersion}\u0000${e.object.kind}\u0000${m.namespace ?? ""}\u0000${m.name ?? ""}\u0000${m.resourceVersion ?? ""}`,
        () => enc.fresh("DELETED", e.object)
      )
    }
    case "BOOKMARK": {
      const m = e.object.metadata
      const end = m.annotations !== undefined && m.annotations !== null
      return recent.get(
        `${enc.tag}B\u0000${e.object.apiVersion}\u0000${e.object.kind}\u0000${m.resourceVersion ?? ""}\u0000${end}`,
        () => enc.fresh("BOOKMARK", e.object)
      )
    }
    case "ERROR":
      return enc.fresh("ERROR", e.object)
  }
}

/** An object as another version of its resource serves it (CRD versions without conversion: only apiVersion changes). */
export const asVersion = (obj: KubeObject, apiVersion: string): KubeObject =>
  obj.apiVersion === apiVersion ? obj : { ...obj, apiVersion }

/** One event's bytes for a watcher of `apiVersion` (shared unless the version differs). */
const encodeEventAs = (enc: EventEncoding, e: WatchEvent, apiVersion: string): Uint8Array => {
  if (e.type === "ERROR" || e.object.apiVersion === apiVersion || e.object.apiVersion === undefined)
    return encodeEvent(enc, e)
  return enc.fresh(e.type, asVersion(e.object, apiVersion))
}

const JSON_EVENTS: EventEncoding = {
  tag: "",
  added: addedLines,
  modified: modifiedLines,
  shared: (type, obj) => line(type, jsonOf(obj)),
  fresh: (type, obj) => line(type, JSON.stringify(obj))
}

/** The JSON line of one watch event. */
export const eventBytes = (e: WatchEvent): Uint8Array => encodeEvent(JSON_EVENTS, e)

/** One event's JSON line for a watcher of `apiVersion`. */
export const eventBytesAs = (e: WatchEvent, apiVersion: string): Uint8Array => encodeEventAs(JSON_EVENTS, e, apiVersion)

const objectProtobuf = new WeakMap<object, Uint8Array>()
const objectMessage = new WeakMap<object, Uint8Array>()

/** `k8s\0` + Unknown of an object with a protobuf message, once per object (NotMarshalable otherwise). */
export const protobufOf = (obj: KubeObject): Uint8Array => cachedIn(objectProtobuf, () => encodeProtobuf(obj), obj)

/** An object's message alone (a list's item), once per object. */
export const protobufMessageOf = (obj: KubeObject): Uint8Array =>
  // encodeProtobuf throws NotMarshalable for an object without a message
  cachedIn(objectMessage, () => encodeMessage(obj) ?? encodeProtobuf(obj), obj)

const PROTOBUF_EVENTS: EventEncoding = {
  tag: "P",
  added: new WeakMap(),
  modified: new WeakMap(),
  shared: (type, obj) => watchFrame(type, protobufOf(obj)),
  fresh: (type, obj) => watchFrame(type, encodeProtobuf(obj))
}

/** One event's protobuf frame for a watcher of `apiVersion` (shared unless the version differs). */
export const protobufEventBytesAs = (e: WatchEvent, apiVersion: string): Uint8Array =>
  encodeEventAs(PROTOBUF_EVENTS, e, apiVersion)
