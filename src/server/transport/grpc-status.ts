/**
 * What the lean transport writes in header blocks: the response headers (encoded once), the
 * trailers of a status (grpc-status, grpc-message percent-encoded as the gRPC HTTP/2 protocol
 * says: grpc-go's internal/grpcutil encodeGrpcMessage), and what it reads: grpc-timeout.
 */
import { pushInteger, pushLiteral } from "../../h2/hpack.js"

/** `:status: 200` (static index 8) and `content-type: application/grpc` (name index 31). */
export const RESPONSE_HEADERS: Buffer = (() => {
  const out: Array<number> = []
  pushInteger(out, 0x80, 7, 8)
  pushLiteral(out, 31, "content-type", "application/grpc")
  return Buffer.from(out)
})()

/** grpc-message's percent-encoding: bytes outside 0x20–0x7e, and '%', become %XX of the UTF-8. */
export const encodeGrpcMessage = (message: string): string => {
  let plain = true
  for (let i = 0; i < message.length; i++) {
    const c = message.charCodeAt(i)
    if (c < 0x20 || c > 0x7e || c === 0x25) {
      plain = false
      break
    }
  }
  if (plain) return message
  let out = ""
  for (const b of Buffer.from(message, "utf8")) {
    out +=
      b < 0x20 || b > 0x7e || b === 0x25 ? `%${b.toString(16).toUpperCase().padStart(2, "0")}` : String.fromCharCode(b)
  }
  return out
}

const OK_TRAILERS: Buffer = (() => {
  const out: Array<number> = []
  pushLiteral(out, 0, "grpc-status", "0")
  return Buffer.from(out)
})()

/** The trailers of a status; with `headers`, a trailers-only response (RESPONSE_HEADERS first). */
export const statusBlock = (code: number, message: string, headers: boolean): Buffer => {
  if (code === 0 && message === "" && !headers) return OK_TRAILERS
  const out: Array<number> = []
  if (headers) for (const b of RESPONSE_HEADERS) out.push(b)
  pushLiteral(out, 0, "grpc-status", String(code))
  if (message !== "") pushLiteral(out, 0, "grpc-message", encodeGrpcMessage(message))
  return Buffer.from(out)
}

/** The unit letters of grpc-timeout and their milliseconds. */
const TIMEOUT_UNITS: Record<string, number> = { H: 3_600_000, M: 60_000, S: 1000, m: 1, u: 1e-3, n: 1e-6 }

/**
 * grpc-timeout ("1-8 digits, then H M S m u n") in ms; undefined when malformed (grpc-go then
 * refuses the call: "malformed grpc-timeout").
 */
export const parseGrpcTimeout = (value: string): number | undefined => {
  if (value.length < 2 || value.length > 9) return undefined
  const unit = TIMEOUT_UNITS[value[value.length - 1]!]
  if (unit === undefined) return undefined
  const digits = value.slice(0, -1)
  if (!/^[0-9]+$/.test(digits)) return undefined
  return Number(digits) * unit
}
