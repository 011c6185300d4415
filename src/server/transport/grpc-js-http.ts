/**
 * Plain HTTP/2 requests on the grpc-js transport: grpc-js answers a request whose content-type is
 * not application/grpc with 415 (`Server._verifyContentType`, grpc-js 1.14, pinned). As etcd's mux
 * sends such a request to its HTTP handlers, that check is wrapped on our server instance: a
 * request that is not gRPC is handed to the client port's node:http handler through node's own
 * HTTP/2 compatibility objects (the ones node:http2's "request" event gives), and grpc-js leaves
 * the stream alone. test/server/http2-client-port.test.ts runs both transports.
 */
import type * as grpc from "@grpc/grpc-js"
import * as http2 from "node:http2"
import type * as Http from "node:http"
import type { HttpHandler } from "./http-stream.js"

type Verify = (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders) => boolean

/** etcd's test (embed/serve.go grpcHandlerFunc): gRPC when the content-type contains application/grpc */
export const isGrpcContentType = (contentType: unknown): boolean =>
  typeof contentType === "string" && contentType.includes("application/grpc")

export const serveHttpBeside = (server: grpc.Server, handler: HttpHandler): void => {
  const target = server as unknown as { _verifyContentType?: Verify }
  const verify = target._verifyContentType
  if (typeof verify !== "function") throw new Error("etcd-effect: grpc-js has no _verifyContentType (plain HTTP/2)")
  target._verifyContentType = function (this: unknown, stream, headers) {
    if (isGrpcContentType(headers["content-type"])) return verify.call(this, stream, headers)
    const raw: Array<string> = []
    for (const [k, v] of Object.entries(headers)) {
      for (const value of Array.isArray(v) ? v : [v]) if (value !== undefined) raw.push(k, String(value))
    }
    const req = new http2.Http2ServerRequest(stream, headers, {} as never, raw)
    const res = new http2.Http2ServerResponse(stream)
    handler(req as unknown as Http.IncomingMessage, res as unknown as Http.ServerResponse)
    return false
  }
}
