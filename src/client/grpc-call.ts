/**
 * A bidirectional gRPC call without grpc-js's Node-stream wrapper: raw message bytes in and out,
 * one callback per received message, and reading pulled one message at a time.
 *
 * grpc-js's ClientDuplexStream pushes every message through a Readable (buffering, 'data'
 * events, interceptor and (de)serializer layers); the Watch hot path needs none of that. Pulling
 * (`startRead` after each message) also gives flow control for free: while `pause`d, no read is
 * outstanding, grpc-js stops consuming the HTTP/2 stream and the server's window closes.
 */
import * as grpc from "@grpc/grpc-js"

export interface RawCallHandlers {
  readonly onMessage: (bytes: Buffer) => void
  /** exactly once, also after `cancel` */
  readonly onStatus: (status: grpc.StatusObject) => void
}

export interface RawBidiCall {
  readonly write: (bytes: Buffer) => void
  readonly cancel: () => void
  readonly pause: () => void
  readonly resume: () => void
}

export const openBidiCall = (
  client: grpc.Client,
  path: string,
  metadata: grpc.Metadata,
  handlers: RawCallHandlers
): RawBidiCall => {
  const call = client.getChannel().createCall(path, Infinity, undefined, null, undefined)
  let paused = false
  let reading = false
  let ended = false
  const read = () => {
    if (paused || reading || ended) return
    reading = true
    call.startRead()
  }
  call.start(metadata, {
    onReceiveMetadata: () => {},
    onReceiveMessage: (bytes: Buffer) => {
      reading = false
      handlers.onMessage(bytes)
      read()
    },
    onReceiveStatus: (status: grpc.StatusObject) => {
      if (ended) return
      ended = true
      handlers.onStatus(status)
    }
  })
  read()
  return {
    write: (bytes) => {
      if (!ended) call.sendMessageWithContext({}, bytes)
    },
    cancel: () => {
      if (!ended) call.cancelWithStatus(grpc.status.CANCELLED, "Cancelled on client")
    },
    pause: () => {
      paused = true
    },
    resume: () => {
      paused = false
      read()
    }
  }
}
