/**
 * value.Transformer (k8s.io/apiserver/pkg/storage/value): how object bytes are turned into what is
 * stored in etcd and back (encryption at rest). Synchronous: it runs once per stored value on every
 * read and every watch event. `stale` on read says the value was written with a key or provider
 * that is no longer the first one: the store rewrites it on the next update.
 */
export type FromStorageResult =
  | { readonly ok: true; readonly data: Uint8Array; readonly stale: boolean }
  | { readonly ok: false; readonly error: string }

/** value.Transformer: encrypts values on their way to etcd and decrypts them on the way back. */
export interface ValueTransformer {
  /** decrypt (or pass through) a value read from etcd under `key` (the authenticated data) */
  readonly fromStorage: (data: Uint8Array, key: string) => FromStorageResult
  /** encrypt a value about to be written under `key` */
  readonly toStorage: (data: Uint8Array, key: string) => Uint8Array
}

/** identity: stores bytes as they are. */
export const identity: ValueTransformer = {
  fromStorage: (data) => ({ ok: true, data, stale: false }),
  toStorage: (data) => data
}
