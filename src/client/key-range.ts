/**
 * Key ranges as clientv3's op.go builds them: a single key, [key, rangeEnd), a prefix, or every
 * key from `key` on. `range_end = "\0"` means "to the end of the keyspace" on the wire.
 */
import { EMPTY_BYTES, toBytes } from "./key-value.js"

/** Which keys a request covers besides `key` itself: a prefix, from a key on, or up to `rangeEnd`. */
export interface RangeOptions {
  /** every key starting with `key` (`WithPrefix`) */
  readonly prefix?: boolean | undefined
  /** every key >= `key` (`WithFromKey`) */
  readonly fromKey?: boolean | undefined
  /** the half-open range [key, rangeEnd) (`WithRange`) */
  readonly rangeEnd?: string | Uint8Array | undefined
}

export interface KeyRange {
  readonly key: Uint8Array
  readonly rangeEnd: Uint8Array
}

const NUL = new Uint8Array([0])

/** `getPrefix`: the first key after every key with this prefix; "\0" when there is none. */
export const prefixEnd = (key: Uint8Array): Uint8Array => {
  for (let i = key.length - 1; i >= 0; i--) {
    if (key[i]! < 0xff) {
      const end = key.slice(0, i + 1)
      end[i]!++
      return end
    }
  }
  return NUL
}

/** The wire key and range_end for a key and its options (prefix, then fromKey, then rangeEnd win). */
export const keyRange = (key: string | Uint8Array, options: RangeOptions = {}): KeyRange => {
  const k = toBytes(key)
  if (options.prefix === true) return k.length === 0 ? { key: NUL, rangeEnd: NUL } : { key: k, rangeEnd: prefixEnd(k) }
  if (options.fromKey === true) return { key: k.length === 0 ? NUL : k, rangeEnd: NUL }
  if (options.rangeEnd !== undefined) return { key: k, rangeEnd: toBytes(options.rangeEnd) }
  return { key: k, rangeEnd: EMPTY_BYTES }
}
