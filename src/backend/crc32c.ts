/**
 * CRC-32C (Castagnoli) for WAL records. A copy of src/server/crc32c.ts (the server's HashKV
 * checksum), so the backend does not depend on the server layer. Table-driven, incremental:
 * `crc32cUpdate(crc, bytes)` from `0`.
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
