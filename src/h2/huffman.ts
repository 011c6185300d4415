/**
 * HPACK Huffman decoding (RFC 7541 §5.2), for the few header strings the bench reads (content-type,
 * grpc-status, grpc-message): a bit-by-bit walk of a binary trie built once from the code table.
 * Header blocks come once per call, not per event, so simplicity wins over a table-driven decoder.
 */
import { HUFFMAN_CODES, HUFFMAN_LENGTHS } from "./huffman-table.js"

const EOS = 256
/** child[2n + bit] of node n: another node (> 0), a symbol (-1 - symbol) or 0 (none) */
const child: Array<number> = [0, 0]

for (let symbol = 0; symbol <= EOS; symbol++) {
  const code = HUFFMAN_CODES[symbol]!
  const length = HUFFMAN_LENGTHS[symbol]!
  let node = 0
  for (let i = length - 1; i >= 0; i--) {
    const bit = Math.floor(code / 2 ** i) & 1
    const slot = 2 * node + bit
    if (i === 0) {
      child[slot] = -1 - symbol
    } else {
      if (child[slot] === 0) {
        child[slot] = child.length / 2
        child.push(0, 0)
      }
      node = child[slot]!
    }
  }
}
const trie = Int32Array.from(child)

/** Decodes `buf[start, end)`; throws on an invalid code, EOS inside, or bad padding. Latin-1 out. */
export const huffmanDecode = (buf: Uint8Array, start: number, end: number): string => {
  const out: Array<number> = []
  let node = 0
  let depth = 0 // bits since the last symbol
  let allOnes = true
  for (let i = start; i < end; i++) {
    const byte = buf[i]!
    for (let b = 7; b >= 0; b--) {
      const bit = (byte >> b) & 1
      const next = trie[2 * node + bit]!
      if (next === 0) throw new RangeError("HPACK: invalid Huffman code")
      if (next < 0) {
        const symbol = -1 - next
        if (symbol === EOS) throw new RangeError("HPACK: EOS in a Huffman string")
        out.push(symbol)
        node = 0
        depth = 0
        allOnes = true
      } else {
        node = next
        depth++
        allOnes &&= bit === 1
      }
    }
  }
  // What is left must be padding: fewer than 8 bits, all ones (a prefix of EOS).
  if (depth > 7 || !allOnes) throw new RangeError("HPACK: bad Huffman padding")
  let text = ""
  for (let i = 0; i < out.length; i += 4096) text += String.fromCharCode(...out.slice(i, i + 4096))
  return text
}
