/**
 * gRPC message framing on the send side (grpc-go's rpc_util.go `msgHeader`): every message is
 * preceded by 5 bytes, a compressed flag (0: nobody here compresses) and the message's length as a
 * 4-byte big-endian integer. One writer for the lean client, the server's transport, the watch
 * batches (src/server/watch-wire.ts) and the load generator; the receive side is grpc-deframer.ts.
 */

/** bytes before each gRPC message */
export const GRPC_PREFIX_BYTES = 5

/** Writes the prefix of a `length`-byte message at `at` (the message follows at `at + 5`). */
export const writeGrpcPrefix = (buf: Buffer, at: number, length: number): void => {
  buf[at] = 0
  buf.writeUInt32BE(length, at + 1)
}

/** A fresh buffer holding the prefix and then `message`. */
export const grpcMessage = (message: Uint8Array): Buffer => {
  const framed = Buffer.allocUnsafe(GRPC_PREFIX_BYTES + message.length)
  writeGrpcPrefix(framed, 0, message.length)
  framed.set(message, GRPC_PREFIX_BYTES)
  return framed
}
