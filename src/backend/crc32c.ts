/**
 * CRC-32C (Castagnoli): the WAL's record checksum, and the one etcd's Hash and HashKV use (Go's
 * crc32.MakeTable(crc32.Castagnoli); src/server/hash.ts). Table-driven, incremental:
 * `crc32cUpdate(crc, bytes)` from `0`, as Go's hash.Hash32 does.
 */
const TABLE = (() => {
  const t = new Uint32Array(256)
  for (let i = 0; i < 256; i++) {
    let c = i
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1
    t[i] = c >>> 0
  }
  return t
})()

/** Continues the checksum `crc` (0 to start) over `bytes[start, end)`. */
export const crc32cUpdate = (crc: number, bytes: Uint8Array, start = 0, end = bytes.length): number => {
  let c = ~crc >>> 0
  for (let i = start; i < end; i++) c = TABLE[(c ^ bytes[i]!) & 0xff]! ^ (c >>> 8)
  return ~c >>> 0
}

export const crc32c = (bytes: Uint8Array): number => crc32cUpdate(0, bytes)
