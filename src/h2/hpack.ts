/**
 * HPACK (RFC 7541) for the client (src/h2/client-connection.ts) and the server's lean transport
 * (src/server/transport). Decoding is complete — static and dynamic tables, size updates, Huffman —
 * because every header block the peer sends must be decoded in order to keep the dynamic table in
 * step, even the ones we ignore. Decoding limits a server needs against hostile peers: the dynamic
 * table never grows past our SETTINGS_HEADER_TABLE_SIZE, and fields past SETTINGS_MAX_HEADER_LIST_SIZE
 * (RFC 9113 §6.5.2: name + value + 32 each) are decoded (the table must stay in step) but dropped
 * and reported (`listTooLarge`), as golang.org/x/net/http2's hpack decoder with
 * SetMaxStringLength/MaxHeaderListSize does. Encoding is literal-without-indexing fields, no
 * Huffman, no dynamic table (so the peer's decoder state never depends on us), built once per
 * path (requests) or per status (responses).
 *
 * Names and values are latin-1 strings (HTTP field bytes one-to-one; gRPC's are ASCII).
 */
import { huffmanDecode } from "./huffman.js"

const STATIC_TABLE: ReadonlyArray<readonly [string, string]> = [
  [":authority", ""],
  [":method", "GET"],
  [":method", "POST"],
  [":path", "/"],
  [":path", "/index.html"],
  [":scheme", "http"],
  [":scheme", "https"],
  [":status", "200"],
  [":status", "204"],
  [":status", "206"],
  [":status", "304"],
  [":status", "400"],
  [":status", "404"],
  [":status", "500"],
  ["accept-charset", ""],
  ["accept-encoding", "gzip, deflate"],
  ["accept-language", ""],
  ["accept-ranges", ""],
  ["accept", ""],
  ["access-control-allow-origin", ""],
  ["age", ""],
  ["allow", ""],
  ["authorization", ""],
  ["cache-control", ""],
  ["content-disposition", ""],
  ["content-encoding", ""],
  ["content-language", ""],
  ["content-length", ""],
  ["content-location", ""],
  ["content-range", ""],
  ["content-type", ""],
  ["cookie", ""],
  ["date", ""],
  ["etag", ""],
  ["expect", ""],
  ["expires", ""],
  ["from", ""],
  ["host", ""],
  ["if-match", ""],
  ["if-modified-since", ""],
  ["if-none-match", ""],
  ["if-range", ""],
  ["if-unmodified-since", ""],
  ["last-modified", ""],
  ["link", ""],
  ["location", ""],
  ["max-forwards", ""],
  ["proxy-authenticate", ""],
  ["proxy-authorization", ""],
  ["range", ""],
  ["referer", ""],
  ["refresh", ""],
  ["retry-after", ""],
  ["server", ""],
  ["set-cookie", ""],
  ["strict-transport-security", ""],
  ["transfer-encoding", ""],
  ["user-agent", ""],
  ["vary", ""],
  ["via", ""],
  ["www-authenticate", ""]
]

/** The header table size both sides start with (SETTINGS_HEADER_TABLE_SIZE default; we keep it). */
export const HEADER_TABLE_SIZE = 4096

/** A decoded header block: names and values alternating. */
export type HeaderList = Array<string>

/** A header block that cannot be decoded: a COMPRESSION_ERROR connection error (RFC 9113 §4.3). */
export class HpackError extends RangeError {}

export class HpackDecoder {
  /** newest first */
  private readonly dynamic: Array<readonly [string, string]> = []
  private size = 0
  private maxSize: number
  private pos = 0
  private listSize = 0
  /** the last decoded block had more than `maxHeaderListSize` octets: fields past it were dropped */
  listTooLarge = false

  /**
   * `tableSizeLimit`: our SETTINGS_HEADER_TABLE_SIZE, what the peer's size updates may not exceed;
   * `maxHeaderListSize`: our SETTINGS_MAX_HEADER_LIST_SIZE (Infinity: none).
   */
  private fields = 0

  constructor(
    private readonly tableSizeLimit: number = HEADER_TABLE_SIZE,
    private readonly maxHeaderListSize: number = Infinity,
    /** fields in one list beyond which the list is too large too (node's maxHeaderListPairs) */
    private readonly maxHeaderFields: number = Infinity
  ) {
    this.maxSize = tableSizeLimit
  }

  /** Decodes one complete header block; throws HpackError on anything malformed (a connection error). */
  decode(buf: Uint8Array, start: number, end: number): HeaderList {
    const out: HeaderList = []
    this.pos = start
    this.listSize = 0
    this.fields = 0
    this.listTooLarge = false
    let fieldsSeen = false
    while (this.pos < end) {
      const b = buf[this.pos]!
      if (b >= 0x80) {
        // indexed field
        const [name, value] = this.entry(this.integer(buf, end, 7))
        this.push(out, name, value)
        fieldsSeen = true
      } else if (b >= 0x40) {
        // literal with incremental indexing
        const field = this.literal(buf, end, 6)
        this.push(out, field[0], field[1])
        this.add(field)
        fieldsSeen = true
      } else if (b >= 0x20) {
        // dynamic table size update: only before the first field
        if (fieldsSeen) throw new HpackError("HPACK: table size update after a field")
        const size = this.integer(buf, end, 5)
        if (size > this.tableSizeLimit) throw new HpackError("HPACK: table size update above our setting")
        this.maxSize = size
        this.evict(0)
      } else {
        // literal without indexing (0000) or never indexed (0001)
        const field = this.literal(buf, end, 4)
        this.push(out, field[0], field[1])
        fieldsSeen = true
      }
    }
    return out
  }

  private push(out: HeaderList, name: string, value: string): void {
    this.listSize += name.length + value.length + 32
    if (this.listSize > this.maxHeaderListSize || ++this.fields > this.maxHeaderFields) this.listTooLarge = true
    else out.push(name, value)
  }

  private entry(index: number): readonly [string, string] {
    if (index === 0) throw new HpackError("HPACK: index 0")
    if (index <= STATIC_TABLE.length) return STATIC_TABLE[index - 1]!
    const e = this.dynamic[index - STATIC_TABLE.length - 1]
    if (e === undefined) throw new HpackError(`HPACK: index ${index} beyond the tables`)
    return e
  }

  private literal(buf: Uint8Array, end: number, prefix: number): readonly [string, string] {
    const index = this.integer(buf, end, prefix)
    const name = index === 0 ? this.string(buf, end) : this.entry(index)[0]
    return [name, this.string(buf, end)]
  }

  private add(field: readonly [string, string]): void {
    const size = field[0].length + field[1].length + 32
    if (size > this.maxSize) {
      // larger than the whole table: empties it (RFC 7541 §4.4)
      this.dynamic.length = 0
      this.size = 0
      return
    }
    this.evict(size)
    this.dynamic.unshift(field)
    this.size += size
  }

  /** Evicts the oldest entries until `room` more octets fit. */
  private evict(room: number): void {
    while (this.size + room > this.maxSize) {
      const old = this.dynamic.pop()!
      this.size -= old[0].length + old[1].length + 32
    }
  }

  /** An integer with an N-bit prefix (RFC 7541 §5.1), starting at the current byte. */
  private integer(buf: Uint8Array, end: number, prefixBits: number): number {
    const max = (1 << prefixBits) - 1
    if (this.pos >= end) throw new HpackError("HPACK: truncated integer")
    let value = buf[this.pos++]! & max
    if (value < max) return value
    let shift = 0
    for (;;) {
      if (this.pos >= end) throw new HpackError("HPACK: truncated integer")
      const b = buf[this.pos++]!
      value += (b & 0x7f) * 2 ** shift
      shift += 7
      if (b < 0x80) return value
      if (shift > 28) throw new HpackError("HPACK: integer too large")
    }
  }

  private string(buf: Uint8Array, end: number): string {
    if (this.pos >= end) throw new HpackError("HPACK: truncated string")
    const huffman = buf[this.pos]! >= 0x80
    const length = this.integer(buf, end, 7)
    const start = this.pos
    const stop = start + length
    if (stop > end) throw new HpackError("HPACK: string beyond the block")
    this.pos = stop
    return huffman
      ? huffmanDecode(buf, start, stop)
      : Buffer.from(buf.buffer, buf.byteOffset + start, length).toString("latin1")
  }
}

/** Appends an integer with an N-bit prefix; `first` holds the representation's flag bits. */
export const pushInteger = (out: Array<number>, first: number, prefixBits: number, value: number): void => {
  const max = (1 << prefixBits) - 1
  if (value < max) {
    out.push(first | value)
    return
  }
  out.push(first | max)
  value -= max
  while (value >= 0x80) {
    out.push((value % 128) | 0x80)
    value = Math.floor(value / 128)
  }
  out.push(value)
}

const pushString = (out: Array<number>, text: string): void => {
  const bytes = Buffer.from(text, "latin1")
  pushInteger(out, 0x00, 7, bytes.length) // H = 0: no Huffman
  for (const b of bytes) out.push(b)
}

/** A literal field without indexing: a static-table name index (0: the name follows as a string). */
export const pushLiteral = (out: Array<number>, nameIndex: number, name: string, value: string): void => {
  pushInteger(out, 0x00, 4, nameIndex)
  if (nameIndex === 0) pushString(out, name)
  pushString(out, value)
}

/**
 * The header block of a gRPC request: POST, http, the path, the authority, content-type
 * application/grpc, te: trailers.
 */
export const grpcRequestHeaderBlock = (path: string, authority: string): Uint8Array => {
  const out: Array<number> = []
  pushInteger(out, 0x80, 7, 3) // :method POST
  pushInteger(out, 0x80, 7, 6) // :scheme http
  pushLiteral(out, 4, ":path", path)
  pushLiteral(out, 1, ":authority", authority)
  pushLiteral(out, 31, "content-type", "application/grpc")
  pushLiteral(out, 0, "te", "trailers")
  return Uint8Array.from(out)
}
