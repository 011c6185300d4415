/**
 * HTTP/2 frame types, flags, settings and error codes (RFC 9113 §6, §7), and the writers of frame
 * headers and whole control frames: the lean client (client-write-buffer.ts) writes them into its
 * output buffer, the server's transport (src/server/transport/frame-output.ts) each into a Buffer
 * of its own.
 */

export const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1")
export const FRAME_HEADER = 9

export const FrameType = {
  DATA: 0x0,
  HEADERS: 0x1,
  PRIORITY: 0x2,
  RST_STREAM: 0x3,
  SETTINGS: 0x4,
  PUSH_PROMISE: 0x5,
  PING: 0x6,
  GOAWAY: 0x7,
  WINDOW_UPDATE: 0x8,
  CONTINUATION: 0x9
} as const

export const Flag = {
  END_STREAM: 0x1,
  ACK: 0x1,
  END_HEADERS: 0x4,
  PADDED: 0x8,
  PRIORITY: 0x20
} as const

export const Setting = {
  HEADER_TABLE_SIZE: 0x1,
  ENABLE_PUSH: 0x2,
  MAX_CONCURRENT_STREAMS: 0x3,
  INITIAL_WINDOW_SIZE: 0x4,
  MAX_FRAME_SIZE: 0x5,
  MAX_HEADER_LIST_SIZE: 0x6
} as const

export const ErrorCode = {
  NO_ERROR: 0x0,
  PROTOCOL_ERROR: 0x1,
  INTERNAL_ERROR: 0x2,
  FLOW_CONTROL_ERROR: 0x3,
  SETTINGS_TIMEOUT: 0x4,
  STREAM_CLOSED: 0x5,
  FRAME_SIZE_ERROR: 0x6,
  REFUSED_STREAM: 0x7,
  CANCEL: 0x8,
  COMPRESSION_ERROR: 0x9,
  ENHANCE_YOUR_CALM: 0xb
} as const

const ERROR_NAMES = [
  "NO_ERROR",
  "PROTOCOL_ERROR",
  "INTERNAL_ERROR",
  "FLOW_CONTROL_ERROR",
  "SETTINGS_TIMEOUT",
  "STREAM_CLOSED",
  "FRAME_SIZE_ERROR",
  "REFUSED_STREAM",
  "CANCEL",
  "COMPRESSION_ERROR",
  "CONNECT_ERROR",
  "ENHANCE_YOUR_CALM",
  "INADEQUATE_SECURITY",
  "HTTP_1_1_REQUIRED"
]

export const errorName = (code: number): string => ERROR_NAMES[code] ?? `error 0x${code.toString(16)}`

/** The initial flow-control window and frame size before SETTINGS say otherwise. */
export const DEFAULT_WINDOW = 65535
export const DEFAULT_MAX_FRAME = 16384

/** Writes a frame header at `at`. */
export const writeFrameHeader = (
  buf: Uint8Array,
  at: number,
  length: number,
  type: number,
  flags: number,
  streamId: number
): void => {
  buf[at] = length >>> 16
  buf[at + 1] = (length >>> 8) & 0xff
  buf[at + 2] = length & 0xff
  buf[at + 3] = type
  buf[at + 4] = flags
  buf[at + 5] = (streamId >>> 24) & 0x7f
  buf[at + 6] = (streamId >>> 16) & 0xff
  buf[at + 7] = (streamId >>> 8) & 0xff
  buf[at + 8] = streamId & 0xff
}

export const readUint32 = (buf: Uint8Array, at: number): number =>
  buf[at]! * 0x1000000 + ((buf[at + 1]! << 16) | (buf[at + 2]! << 8) | buf[at + 3]!)

/** Writes `value` as 4 bytes, big-endian, at `at`. */
export const writeUint32 = (buf: Uint8Array, at: number, value: number): void => {
  buf[at] = value >>> 24
  buf[at + 1] = (value >>> 16) & 0xff
  buf[at + 2] = (value >>> 8) & 0xff
  buf[at + 3] = value & 0xff
}

// Whole control frames, written at `at`; each writer's size beside it.

/** A SETTINGS frame of `entries` [id, value] (none: an ACK). */
export const settingsFrameSize = (entries: number): number => FRAME_HEADER + 6 * entries
export const writeSettingsFrame = (
  buf: Uint8Array,
  at: number,
  flags: number,
  entries: ReadonlyArray<readonly [number, number]>
): void => {
  writeFrameHeader(buf, at, 6 * entries.length, FrameType.SETTINGS, flags, 0)
  for (let i = 0, p = at + FRAME_HEADER; i < entries.length; i++, p += 6) {
    const [id, value] = entries[i]!
    buf[p] = id >>> 8
    buf[p + 1] = id & 0xff
    writeUint32(buf, p + 2, value)
  }
}

/** A WINDOW_UPDATE (its increment) or RST_STREAM (its error code): one 32-bit value. */
export const U32_FRAME_SIZE = FRAME_HEADER + 4
export const writeU32Frame = (buf: Uint8Array, at: number, type: number, streamId: number, value: number): void => {
  writeFrameHeader(buf, at, 4, type, 0, streamId)
  writeUint32(buf, at + FRAME_HEADER, value)
}

/** A PING (or its ACK) with the 8 bytes data[start, start + 8). */
export const PING_FRAME_SIZE = FRAME_HEADER + 8
export const writePingFrame = (buf: Uint8Array, at: number, flags: number, data: Uint8Array, start: number): void => {
  writeFrameHeader(buf, at, 8, FrameType.PING, flags, 0)
  buf.set(data.subarray(start, start + 8), at + FRAME_HEADER)
}

/** A GOAWAY: the last stream id processed, the error code, debug data. */
export const goawayFrameSize = (debugLength: number): number => FRAME_HEADER + 8 + debugLength
export const writeGoawayFrame = (
  buf: Uint8Array,
  at: number,
  lastStreamId: number,
  code: number,
  debug: Uint8Array
): void => {
  writeFrameHeader(buf, at, 8 + debug.length, FrameType.GOAWAY, 0, 0)
  writeUint32(buf, at + FRAME_HEADER, lastStreamId)
  writeUint32(buf, at + FRAME_HEADER + 4, code)
  buf.set(debug, at + FRAME_HEADER + 8)
}

// The same frames, each in a Buffer of its own (the server's transport queues them by reference).

export const settingsFrame = (flags: number, entries: ReadonlyArray<readonly [number, number]>): Buffer => {
  const f = Buffer.allocUnsafe(settingsFrameSize(entries.length))
  writeSettingsFrame(f, 0, flags, entries)
  return f
}

export const u32Frame = (type: number, streamId: number, value: number): Buffer => {
  const f = Buffer.allocUnsafe(U32_FRAME_SIZE)
  writeU32Frame(f, 0, type, streamId, value)
  return f
}

export const pingFrame = (flags: number, data: Uint8Array, start: number): Buffer => {
  const f = Buffer.allocUnsafe(PING_FRAME_SIZE)
  writePingFrame(f, 0, flags, data, start)
  return f
}

export const goawayFrame = (lastStreamId: number, code: number, debug: Uint8Array): Buffer => {
  const f = Buffer.allocUnsafe(goawayFrameSize(debug.length))
  writeGoawayFrame(f, 0, lastStreamId, code, debug)
  return f
}
