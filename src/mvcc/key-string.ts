/**
 * Keys as latin1 strings, one char per byte: JavaScript's native string order is then bytewise
 * order, as etcd's keys sort, and they are cheap Map keys. The key index, request checks, the
 * lessor's attached keys, the hash, and the watch layer's watcher groups all hold keys this way.
 */

// Buffer's own latin1 decoder, called on the bytes in place (no Buffer view allocated per key)
const latin1Slice = (Buffer.prototype as unknown as { latin1Slice: (this: Uint8Array, s: number, e: number) => string })
  .latin1Slice

/** Bytes → latin1 string: one char per byte, so string order is byte order. */
export const keyString = (bytes: Uint8Array): string =>
  bytes.byteLength === 0 ? "" : latin1Slice.call(bytes, 0, bytes.byteLength)

/** latin1 string → bytes. */
export const keyBytes = (key: string): Uint8Array => new Uint8Array(Buffer.from(key, "latin1"))
