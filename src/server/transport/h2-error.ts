import { FrameSizeError } from "../../h2/frame-reader.js"
import { ErrorCode } from "../../h2/frames.js"
import { HpackError } from "../../h2/hpack.js"

/** An HTTP/2 connection error (RFC 9113 §5.4.1): the connection sends GOAWAY with `code` and closes. */
export class H2ConnectionError extends Error {
  constructor(
    readonly code: number,
    message: string
  ) {
    super(message)
  }
}

/** What reading a connection threw, as the connection error it is. */
export const asConnectionError = (e: unknown): H2ConnectionError => {
  if (e instanceof H2ConnectionError) return e
  if (e instanceof FrameSizeError) return new H2ConnectionError(ErrorCode.FRAME_SIZE_ERROR, e.message)
  if (e instanceof HpackError || (e instanceof RangeError && e.message.startsWith("HPACK")))
    return new H2ConnectionError(ErrorCode.COMPRESSION_ERROR, e.message)
  if (e instanceof RangeError) return new H2ConnectionError(ErrorCode.PROTOCOL_ERROR, e.message)
  // a bug of ours (or a listener's) costs this connection, never the process
  return new H2ConnectionError(ErrorCode.INTERNAL_ERROR, e instanceof Error ? e.message : String(e))
}
