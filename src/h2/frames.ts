/** HTTP/2 frame types, flags, settings and error codes (RFC 9113 §6, §7): the bench client and the server transport share them. */

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
