/**
 * etcd3/decoder.go: a value read from etcd becomes an object — first through the value
 * transformer (encryption at rest), then decoded with its mod revision as resourceVersion.
 */
import { Either } from "effect"
import { decodeObject } from "../../api/codec.js"
import type { KubeObject } from "../../api/object-meta.js"
import { newInternalError, type StatusError } from "../../api/status.js"
import type { ValueTransformer } from "../value/transformer.js"

/** decode(): bytes from etcd (already untransformed) → object with RV = rev */
export const decode = (data: Uint8Array, rev: bigint): Either.Either<KubeObject, StatusError> =>
  Either.mapLeft(decodeObject(data, rev), newInternalError)

/** The stored value untransformed (`stale`: written with a key that is no longer the first; the next update rewrites it). */
export const fromStorage = (
  transformer: ValueTransformer,
  value: Uint8Array,
  key: string
): Either.Either<{ data: Uint8Array; stale: boolean }, StatusError> => {
  const r = transformer.fromStorage(value, key)
  return r.ok ? Either.right({ data: r.data, stale: r.stale }) : Either.left(newInternalError(r.error))
}
