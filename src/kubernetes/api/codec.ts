/**
 * The JSON codec of stored objects (runtime.Codec for JSON): bytes ↔ KubeObject, validated with the
 * KubeObject schema. Encoding drops metadata.resourceVersion (it is the etcd revision, set on read).
 * Decoding is per event on the watch path, so it is one JSON.parse plus the schema's guard, written
 * out (isKubeObject); the schema decoder runs only to explain a failure.
 */
import { Either, ParseResult, Schema } from "effect"
import { goJsonError } from "./go-json.js"
import { isKubeObject, KubeObject } from "./object-meta.js"

const validate = Schema.decodeUnknownEither(KubeObject)
const encoder = new TextEncoder()
const decoder = new TextDecoder("utf-8", { fatal: true })

/**
 * The object, or why these bytes are not one (the message the apiserver would log/return).
 * The schema's type guard checks the parsed JSON in place (no copy); the decoder runs only to
 * explain a failure. With `resourceVersion`, it is set on the fresh object (the versioner's
 * UpdateObject) without another copy.
 */
export const decodeObject = (bytes: Uint8Array, resourceVersion?: bigint): Either.Either<KubeObject, string> => {
  let json: unknown
  try {
    json = JSON.parse(decoder.decode(bytes))
  } catch (e) {
    // the serializer's text (runtime.Decode): the Go scanner's error for these bytes
    const go = goJsonError(bytes)
    return Either.left(
      `couldn't get version/kind; json parse error: ${go ?? (e instanceof Error ? e.message : String(e))}`
    )
  }
  if (!isKubeObject(json)) {
    return Either.mapLeft(validate(json), (e) => ParseResult.TreeFormatter.formatErrorSync(e))
  }
  if (resourceVersion !== undefined)
    (json.metadata as { resourceVersion?: string }).resourceVersion = resourceVersion.toString()
  return Either.right(json)
}

/** The stored bytes of an object: JSON without metadata.resourceVersion. */
export const encodeObject = (obj: KubeObject): Uint8Array => {
  if (obj.metadata.resourceVersion === undefined) return encoder.encode(JSON.stringify(obj))
  const { resourceVersion: _rv, ...metadata } = obj.metadata
  return encoder.encode(JSON.stringify({ ...obj, metadata }))
}
