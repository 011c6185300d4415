/**
 * The lean transport's settings and its limits against hostile peers (issue 12). Each limit is
 * what node:http2 (nghttp2) or grpc-go's http2_server.go enforces for the same attack; the
 * connection (connection.ts and its parts) ends with the error code named beside it.
 */

/** SETTINGS_INITIAL_WINDOW_SIZE we announce: a stream's receive window (grpc-go: 64 KiB + BDP growth). */
export const STREAM_WINDOW = 1024 * 1024
/** the connection's receive window, raised by WINDOW_UPDATE right after our SETTINGS */
export const CONNECTION_WINDOW = 16 * 1024 * 1024
/** SETTINGS_MAX_FRAME_SIZE: the default; longer frames are FRAME_SIZE_ERROR */
export const MAX_FRAME_SIZE = 16384
/** SETTINGS_HEADER_TABLE_SIZE: the default; a size update above it is COMPRESSION_ERROR */
export const HEADER_TABLE_SIZE = 4096
/** SETTINGS_MAX_HEADER_LIST_SIZE (grpc-go's default is 16 MiB; node's nghttp2 about 64 KiB) */
export const MAX_HEADER_LIST_SIZE = 64 * 1024
/** a header block's encoded size (HEADERS + CONTINUATION) beyond which the connection ends (ENHANCE_YOUR_CALM) */
export const MAX_HEADER_BLOCK_BYTES = 2 * MAX_HEADER_LIST_SIZE
/** fields in one header list (node's maxHeaderListPairs 128) */
export const MAX_HEADER_FIELDS = 128
/** CONTINUATION frames in one header block (the CONTINUATION flood, CVE-2024-27983; nghttp2 caps them too) */
export const MAX_CONTINUATIONS = 16
/** client stream resets: a burst of this many, then RESET_RATE per second (nghttp2's CVE-2023-44487 limit) */
export const RESET_BURST = 1000
export const RESET_RATE = 33
/** control frames (PING/SETTINGS ACKs) queued for a peer that does not read (nghttp2: 1000) */
export const MAX_QUEUED_CONTROL = 1000
/** streams we reset ourselves, remembered so that the client's late frames on them are no error */
export const RECENT_RESETS = 256
/**
 * bytes in the socket beyond which stream data waits for 'drain': 1 MiB (256 KiB made a watch
 * fan-out's streams wait for 'drain' between most writes: bench:compare's watch load, server CPU
 * 2.1–2.7 → 1.8–2.4 s, docs/benchmarks.md lever 3j)
 */
export const SOCKET_HIGH_WATER = 1024 * 1024

/** Client stream resets against the rapid-reset bucket (CVE-2023-44487): RESET_BURST, then RESET_RATE per second. */
export class ResetRate {
  private tokens = RESET_BURST
  private at = performance.now()

  /** One more reset; false when it is one too many (the connection ends: ENHANCE_YOUR_CALM). */
  take(): boolean {
    const now = performance.now()
    this.tokens = Math.min(RESET_BURST, this.tokens + ((now - this.at) / 1000) * RESET_RATE)
    this.at = now
    this.tokens--
    return this.tokens >= 0
  }
}
