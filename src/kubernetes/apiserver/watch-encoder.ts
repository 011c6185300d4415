/**
 * The JSON of objects and watch events, encoded once and shared: every watcher of an event gets
 * the same bytes (the watch cache hands each watcher the same object, so the object's identity is
 * the cache key). A watch event is one line, `{"type":…,"object":…}\n` (NDJSON, as the apiserver's
 * JSON framer writes it). DELETED and BOOKMARK events can be fresh objects per watcher (the Cacher
 * shares its DELETED events, the etcd3 watch and the bookmark ticks do not), so they are keyed by
 * what makes them unique (kind, namespace/name or nothing, and the revision).
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

const cachedIn = (map: WeakMap<object, Uint8Array>, type: string, obj: object): Uint8Array => {
  let b = map.get(obj)
  if (b === undefined) {
    b = line(type, jsonOf(obj))
    map.set(obj, b)
  }
  return b
}

/** The bytes of one watch event. */
export const eventBytes = (e: WatchEvent): Uint8Array => {
  switch (e.type) {
    case "ADDED":
      return cachedIn(addedLines, "ADDED", e.object)
    case "MODIFIED":
      return cachedIn(modifiedLines, "MODIFIED", e.object)
    case "DELETED": {
      const m = e.object.metadata
      return recent.get(
        `D\u0000${e.object.kind}\u0000${m.namespace ?? ""}\u0000${m.name ?? ""}\u0000${m.resourceVersion ?? ""}`,
        () => line("DELETED", JSON.stringify(e.object))
      )
    }
    case "BOOKMARK": {
      const m = e.object.metadata
      const end = m.annotations !== undefined && m.annotations !== null
      return recent.get(
        `B\u0000${e.object.apiVersion}\u0000${e.object.kind}\u0000${m.resourceVersion ?? ""}\u0000${end}`,
        () => line("BOOKMARK", JSON.stringify(e.object))
      )
    }
    case "ERROR":
      return line("ERROR", JSON.stringify(e.object))
  }
}

/** An object as another version of its resource serves it (CRD versions without conversion: only apiVersion changes). */
export const asVersion = (obj: KubeObject, apiVersion: string): KubeObject =>
  obj.apiVersion === apiVersion ? obj : { ...obj, apiVersion }

/** One event's bytes for a watcher of `apiVersion` (shared unless the version differs). */
export const eventBytesAs = (e: WatchEvent, apiVersion: string): Uint8Array => {
  if (e.type === "ERROR" || e.object.apiVersion === apiVersion || e.object.apiVersion === undefined)
    return eventBytes(e)
  return line(e.type, JSON.stringify(asVersion(e.object, apiVersion)))
}

const objectProtobuf = new WeakMap<object, Uint8Array>()
const objectMessage = new WeakMap<object, Uint8Array>()
const addedFrames = new WeakMap<object, Uint8Array>()
const modifiedFrames = new WeakMap<object, Uint8Array>()

/** `k8s\0` + Unknown of an object with a protobuf message, once per object (NotMarshalable otherwise). */
export const protobufOf = (obj: KubeObject): Uint8Array => {
  let b = objectProtobuf.get(obj)
  if (b === undefined) {
    b = encodeProtobuf(obj)
    objectProtobuf.set(obj, b)
  }
  return b
}

/** An object's message alone (a list's item), once per object. */
export const protobufMessageOf = (obj: KubeObject): Uint8Array => {
  let b = objectMessage.get(obj)
  if (b === undefined) {
    b = encodeMessage(obj) ?? encodeProtobuf(obj) // the second throws NotMarshalable
    objectMessage.set(obj, b)
  }
  return b
}

const frameIn = (map: WeakMap<object, Uint8Array>, type: string, obj: KubeObject): Uint8Array => {
  let b = map.get(obj)
  if (b === undefined) {
    b = watchFrame(type, protobufOf(obj))
    map.set(obj, b)
  }
  return b
}

const protobufEventBytes = (e: WatchEvent): Uint8Array => {
  switch (e.type) {
    case "ADDED":
      return frameIn(addedFrames, "ADDED", e.object)
    case "MODIFIED":
      return frameIn(modifiedFrames, "MODIFIED", e.object)
    case "DELETED": {
      const m = e.object.metadata
      return recent.get(
        `PD\u0000${e.object.kind}\u0000${m.namespace ?? ""}\u0000${m.name ?? ""}\u0000${m.resourceVersion ?? ""}`,
        () => watchFrame("DELETED", encodeProtobuf(e.object))
      )
    }
    case "BOOKMARK": {
      const m = e.object.metadata
      const end = m.annotations !== undefined && m.annotations !== null
      return recent.get(
        `PB\u0000${e.object.apiVersion}\u0000${e.object.kind}\u0000${m.resourceVersion ?? ""}\u0000${end}`,
        () => watchFrame("BOOKMARK", encodeProtobuf(e.object))
      )
    }
    case "ERROR":
      return watchFrame("ERROR", encodeProtobuf(e.object))
  }
}

/** One event's protobuf frame for a watcher of `apiVersion` (shared unless the version differs). */
export const protobufEventBytesAs = (e: WatchEvent, apiVersion: string): Uint8Array => {
  if (e.type === "ERROR" || e.object.apiVersion === apiVersion || e.object.apiVersion === undefined)
    return protobufEventBytes(e)
  return watchFrame(e.type, encodeProtobuf(asVersion(e.object, apiVersion)))
}
