/**
 * How streams open on one connection of the lean transport — grpc-go's http2Server.operateHeaders:
 * a header list on a new stream id becomes a gRPC call (server-stream.ts), a request that is not
 * gRPC for the HTTP handlers (http-stream.ts), or a refusal: RST_STREAM, or a trailers-only status
 * for a call that cannot run (wrong content-type, unknown method, an encoding or a grpc-timeout we
 * cannot take). A header list on an open stream is its trailers. Stream ids only go forward.
 */
import { ErrorCode, Flag, FrameType } from "../../h2/frames.js"
import type { HeaderList } from "../../h2/hpack.js"
import type { PingStrikes } from "../keepalive-policy.js"
import type { FlowControl } from "./flow-control.js"
import type { FrameOutput } from "./frame-output.js"
import { parseGrpcTimeout, statusBlock } from "./grpc-status.js"
import { H2ConnectionError } from "./h2-error.js"
import { type HttpHandler, HttpStream } from "./http-stream.js"
import * as L from "./limits.js"
import type { Router } from "./route.js"
import { ServerStream } from "./server-stream.js"
import type { StreamTable } from "./stream-table.js"

const GRPC_UNIMPLEMENTED = 12
const GRPC_INTERNAL = 13

/** The client's address, as node:http's request.socket shows it to the HTTP handlers. */
export interface PeerAddress {
  readonly remoteAddress?: string | undefined
  readonly remotePort?: number | undefined
}

const isGrpc = (contentType: string): boolean =>
  contentType === "application/grpc" ||
  contentType.startsWith("application/grpc+") ||
  contentType.startsWith("application/grpc;")

export class StreamOpener {
  constructor(
    private readonly table: StreamTable,
    private readonly output: FrameOutput,
    private readonly flow: FlowControl,
    private readonly pings: PingStrikes,
    private readonly router: Router,
    private readonly maxConcurrentStreams: number,
    private readonly peerAddress: PeerAddress
  ) {}

  /** A decoded header list on `streamId`; `flags`: its HEADERS frame's. */
  headerList(streamId: number, flags: number, headers: HeaderList, listTooLarge: boolean): void {
    const table = this.table
    const endStream = (flags & Flag.END_STREAM) !== 0
    const existing = table.streams.get(streamId)
    if (existing !== undefined) {
      // trailers from the client: they must end the stream
      if (!endStream || existing.remoteEnded) return table.reset(existing, ErrorCode.PROTOCOL_ERROR)
      existing.remoteEnd()
      return
    }
    if (streamId % 2 === 0) throw new H2ConnectionError(ErrorCode.PROTOCOL_ERROR, "received an illegal stream id")
    if (streamId <= table.lastStreamId) {
      // trailers on a stream we reset ourselves are no error (RFC 9113 §5.1); any other old id is
      if (table.resetLately(streamId)) return
      throw new H2ConnectionError(ErrorCode.PROTOCOL_ERROR, "received an illegal stream id")
    }
    if (table.goawaySent) return table.rst(streamId, ErrorCode.REFUSED_STREAM)
    table.lastStreamId = streamId
    // over SETTINGS_MAX_HEADER_LIST_SIZE or 128 fields: that stream is refused (node's code), the connection lives
    if (listTooLarge) return table.rst(streamId, ErrorCode.ENHANCE_YOUR_CALM)
    if (table.streams.size >= this.maxConcurrentStreams) return table.rst(streamId, ErrorCode.REFUSED_STREAM)
    this.open(streamId, endStream, headers)
  }

  /** A new stream: a call, an HTTP request, or a refusal. */
  private open(streamId: number, endStream: boolean, headers: HeaderList): void {
    let method: string | undefined
    let path: string | undefined
    let contentType: string | undefined
    let timeout: string | undefined
    let encoding: string | undefined
    for (let i = 0; i < headers.length; i += 2) {
      const name = headers[i]!
      if (name === ":method") method = headers[i + 1]
      else if (name === ":path") path = headers[i + 1]
      else if (name === "content-type") contentType = headers[i + 1]
      else if (name === "grpc-timeout") timeout = headers[i + 1]
      else if (name === "grpc-encoding") encoding = headers[i + 1]
    }
    const http = this.router.http
    if (http !== undefined && !(contentType ?? "").includes("application/grpc")) {
      return this.httpRequest(streamId, headers, endStream, method, path, http)
    }
    if (method !== "POST" || path === undefined) return this.table.rst(streamId, ErrorCode.PROTOCOL_ERROR)
    if (contentType === undefined || !isGrpc(contentType)) {
      const message = `invalid gRPC request content-type "${contentType ?? ""}"`
      return this.earlyStatus(streamId, endStream, 415, GRPC_INTERNAL, message)
    }
    const route = this.router.route(path)
    if (route === undefined) {
      return this.earlyStatus(streamId, endStream, 200, GRPC_UNIMPLEMENTED, this.router.unknown(path))
    }
    if (encoding !== undefined && encoding !== "identity") {
      const message = `grpc: Decompressor is not installed for grpc-encoding "${encoding}"`
      return this.earlyStatus(streamId, endStream, 200, GRPC_UNIMPLEMENTED, message)
    }
    let deadline = Infinity
    if (timeout !== undefined) {
      const ms = parseGrpcTimeout(timeout)
      if (ms === undefined) {
        return this.earlyStatus(streamId, endStream, 200, GRPC_INTERNAL, `malformed grpc-timeout: ${timeout}`)
      }
      deadline = Date.now() + ms
    }
    const window = this.flow.peerInitialWindow
    const s = new ServerStream(streamId, route, headers, this.table, window, L.STREAM_WINDOW, deadline)
    this.table.streams.set(streamId, s)
    this.pings.reset()
    if (route.kind === "bidi" || route.kind === "clientStream") s.run()
    if (endStream) s.remoteEnd()
  }

  /** A request that is not gRPC: the HTTP handlers answer it (http-stream.ts). */
  private httpRequest(
    streamId: number,
    headers: HeaderList,
    endStream: boolean,
    method: string | undefined,
    path: string | undefined,
    handler: HttpHandler
  ): void {
    if (method === undefined || path === undefined) return this.table.rst(streamId, ErrorCode.PROTOCOL_ERROR)
    const window = this.flow.peerInitialWindow
    const s = new HttpStream(streamId, headers, this.table, window, L.STREAM_WINDOW, this.peerAddress)
    this.table.streams.set(streamId, s)
    this.pings.reset()
    s.run(handler)
    if (endStream) s.remoteEnd()
  }

  /** A refusal before any call: trailers-only (grpc-go's earlyAbortStream), and RST_STREAM if the client is still sending. */
  private earlyStatus(streamId: number, endStream: boolean, httpStatus: number, code: number, message: string): void {
    let block = statusBlock(code, message, true)
    if (httpStatus !== 200) {
      const status = Buffer.from(`${httpStatus}`, "latin1")
      // :status (name index 8) as a literal in place of the indexed 200 (one byte, 0x88)
      block = Buffer.concat([Buffer.from([0x08, status.length]), status, block.subarray(1)])
    }
    this.output.frame(FrameType.HEADERS, Flag.END_HEADERS | Flag.END_STREAM, streamId, block)
    if (!endStream) this.table.rst(streamId, ErrorCode.NO_ERROR)
  }
}
