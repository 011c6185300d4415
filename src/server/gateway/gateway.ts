/**
 * etcd 3.4's gRPC gateway: the v3 API as JSON over HTTP/1.1 on the client port (cmux.ts sends
 * it the HTTP/1 connections). Each request goes to the same grpc-js handler the gRPC server runs
 * (kv-server.ts, lease-server.ts, …), through a call object shaped like grpc-js' — as etcd's
 * gateway dials its own gRPC server — so validation, errors, metrics and shutdown are the gRPC
 * path's; this file only translates:
 *
 * - request: the body read as Go's json.Decoder would (json-scanner.ts), decoded with the
 *   message's Schema (jsonpb.ts), encoded and decoded again with the method's own codec so the
 *   handler gets exactly what grpc-js would hand it;
 * - unary response: `200` and the message as jsonpb writes it; a failure: grpc-gateway's error
 *   body `{"error":…,"message":…,"code":…}` with its HTTP status for the code;
 * - streams (/v3/watch, /v3/lease/keepalive): every JSON value in the body is one request (the
 *   first one's decode error answers 500 with code 2, later ones end the requests), responses are
 *   written as they come, one `{"result":…}` per line, flushed each; the client closing the
 *   connection cancels the call, as a gRPC client's cancel does.
 */
import * as grpc from "@grpc/grpc-js"
import { Either } from "effect"
import type protobufjs from "protobufjs"
import { EventEmitter } from "node:events"
import type * as Http from "node:http"
import { Duplex } from "node:stream"
import { StringDecoder } from "node:string_decoder"
import { GrpcCode } from "../../errors.js"
import { serviceDefinition, type ServiceName } from "../../proto/load.js"
import { passThroughSerializer } from "../grpc-raw-writer.js"
import { decodeNext, type JsonValue, JsonSyntaxError } from "./json-scanner.js"
import { decodeMessage, goJsonString, marshal, root } from "./jsonpb.js"
import { isGatewayPath, lookupRoute, type Route } from "./routes.js"

/** The handlers the gRPC server registered, by service and method. */
export type ServiceHandlers = Readonly<Record<ServiceName, Readonly<Record<string, unknown>>>>

export interface GatewayOptions {
  /** the largest encoded request the gRPC server takes (its max receive message length) */
  readonly maxRequestBytes: number
}

/** grpc-gateway's runtime.HTTPStatusFromCode. */
export const httpStatusFromCode = (code: number): number => {
  switch (code) {
    case GrpcCode.OK:
      return 200
    case GrpcCode.Canceled:
      return 408
    case GrpcCode.InvalidArgument:
    case GrpcCode.OutOfRange:
      return 400
    case GrpcCode.FailedPrecondition:
      return 412
    case GrpcCode.DeadlineExceeded:
      return 504
    case GrpcCode.NotFound:
      return 404
    case GrpcCode.AlreadyExists:
    case GrpcCode.Aborted:
      return 409
    case GrpcCode.PermissionDenied:
      return 403
    case GrpcCode.Unauthenticated:
      return 401
    case GrpcCode.ResourceExhausted:
      return 429
    case GrpcCode.Unimplemented:
      return 501
    case GrpcCode.Unavailable:
      return 503
    default:
      return 500
  }
}

const STATUS_TEXT: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  408: "Request Timeout",
  409: "Conflict",
  412: "Precondition Failed",
  429: "Too Many Requests",
  500: "Internal Server Error",
  501: "Not Implemented",
  503: "Service Unavailable",
  504: "Gateway Timeout"
}

const JSON_TYPE = "application/json"

/** grpc-gateway's DefaultHTTPError body. */
const errorBody = (code: number, message: string): string => {
  const m = goJsonString(message)
  return `{"error":${m},"message":${m},"code":${code}}`
}

/**
 * An error answer. One the gRPC call returned also carries, as grpc-gateway forwards the call's
 * trailers, `Grpc-Trailer-Content-Type` (so the body is chunked, as etcd's is).
 */
const sendError = (res: Http.ServerResponse, code: number, message: string, fromCall = false): void => {
  if (res.headersSent) return void res.end()
  const body = errorBody(code, message)
  if (fromCall) {
    res.writeHead(httpStatusFromCode(code), { "content-type": JSON_TYPE, trailer: "Grpc-Trailer-Content-Type" })
    res.addTrailers({ "Grpc-Trailer-Content-Type": "application/grpc" })
  } else {
    res.writeHead(httpStatusFromCode(code), { "content-type": JSON_TYPE, "content-length": Buffer.byteLength(body) })
  }
  res.end(body)
}

/** Go's http.Error, as grpc-gateway's OtherErrorHandler uses it (404, 405). */
const sendPlain = (res: Http.ServerResponse, status: number, text: string): void => {
  res.writeHead(status, { "content-type": "text/plain; charset=utf-8", "x-content-type-options": "nosniff" })
  res.end(`${text}\n`)
}

/**
 * Runs `f`, answering Internal instead of letting an exception reach node:http (which would end
 * the process): the request's input is never trusted to be within what the code was tested with.
 */
const guarded = (res: Http.ServerResponse, f: () => void): void => {
  try {
    f()
  } catch (e) {
    const text = e instanceof RangeError ? "request nested too deeply" : e instanceof Error ? e.message : String(e)
    sendError(res, GrpcCode.Internal, `etcd-effect: internal error: ${text}`)
  }
}

/** The grpc-js codecs of a method (the Watch responses arrive pre-encoded: passed through). */
const codec = (route: Route) => {
  const def = serviceDefinition(route.service)[route.method]!
  const method = root()
    .lookupService(`etcdserverpb.${route.service}`)
    .methods[route.method]!.resolve() as protobufjs.Method
  return {
    def,
    requestType: method.resolvedRequestType!,
    responseType: method.resolvedResponseType!,
    serializeResponse: passThroughSerializer(def).responseSerialize
  }
}

type Codec = ReturnType<typeof codec>

/** Decoded JSON → the handler's request: encode with protobufjs, decode with the method's codec. */
const toRequest = (
  c: Codec,
  value: JsonValue,
  maxRequestBytes: number
): { ok: unknown } | { error: string; code: number } => {
  const decoded = decodeMessage(c.requestType, value)
  if (Either.isLeft(decoded)) return { error: decoded.left, code: GrpcCode.InvalidArgument }
  const bytes = c.requestType.encode(c.requestType.fromObject(decoded.right)).finish()
  if (bytes.length > maxRequestBytes) {
    return {
      error: `grpc: received message larger than max (${bytes.length} vs. ${maxRequestBytes})`,
      code: GrpcCode.ResourceExhausted
    }
  }
  return { ok: c.def.requestDeserialize(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length)) }
}

/** A handler's response → jsonpb text. */
const responseJson = (c: Codec, value: unknown): string => {
  const bytes = c.serializeResponse(value)
  const message = c.responseType.decode(bytes) as unknown as Record<string, unknown>
  return marshal(c.responseType, message)
}

/** Reads a whole body (at most `limit` bytes; more is the gRPC server's too-large error). */
const readBody = (req: Http.IncomingMessage, limit: number, done: (text: string | undefined) => void): void => {
  const chunks: Array<Buffer> = []
  let size = 0
  let over = false
  req.on("data", (chunk: Buffer) => {
    size += chunk.length
    if (size > limit) over = true
    else chunks.push(chunk)
  })
  req.once("end", () => done(over ? undefined : Buffer.concat(chunks).toString("utf8")))
  req.once("error", () => {})
}

/** The grpc-js unary call surface the bridge uses (grpc-bridge.ts: request, cancel, deadline). */
class UnaryCall extends EventEmitter {
  cancelled = false
  readonly metadata = new grpc.Metadata()
  constructor(readonly request: unknown) {
    super()
  }
  getDeadline(): number {
    return Infinity
  }
  getPeer(): string {
    return "gateway"
  }
  cancel(): void {
    if (this.cancelled) return
    this.cancelled = true
    this.emit("cancelled")
  }
}

/** grpc-gateway forwards the Authorization header as "authorization" metadata: etcd's token there. */
const forwardToken = (req: Http.IncomingMessage, metadata: grpc.Metadata): void => {
  const token = req.headers.authorization
  if (token !== undefined && token !== "") metadata.set("authorization", token)
}

const serveUnary = (
  handler: grpc.handleUnaryCall<unknown, unknown>,
  c: Codec,
  options: GatewayOptions,
  req: Http.IncomingMessage,
  res: Http.ServerResponse
): void =>
  // JSON text is larger than the message it encodes; the message's own limit is checked after
  readBody(req, options.maxRequestBytes * 4 + 4096, (text) =>
    guarded(res, () => {
      if (text === undefined) {
        return sendError(res, GrpcCode.ResourceExhausted, "grpc: received message larger than max")
      }
      const next = decodeNext(text, 0, true)
      if (next instanceof JsonSyntaxError) return sendError(res, GrpcCode.InvalidArgument, next.message)
      const value: JsonValue = next._tag === "Value" ? next.value : { _tag: "object", raw: "{}", fields: [] }
      const request = toRequest(c, value, options.maxRequestBytes)
      // a message over the gRPC limit is the call's error in etcd (its server refuses it)
      if ("error" in request)
        return sendError(res, request.code, request.error, request.code !== GrpcCode.InvalidArgument)
      const call = new UnaryCall(request.ok)
      forwardToken(req, call.metadata)
      res.once("close", () => {
        if (!res.writableFinished) call.cancel()
      })
      handler(call as unknown as grpc.ServerUnaryCall<unknown, unknown>, (err, value) =>
        guarded(res, () => {
          if (err !== null && err !== undefined) {
            return sendError(res, err.code ?? GrpcCode.Unknown, err.details ?? "", true)
          }
          const body = responseJson(c, value)
          res.writeHead(200, {
            "content-type": JSON_TYPE,
            "grpc-metadata-content-type": "application/grpc",
            "content-length": Buffer.byteLength(body)
          })
          res.end(body)
        })
      )
    })
  )

/**
 * A bidi call's surface (grpc-bridge.ts' readBatch/writeAll, end, emit('error')): an object-mode
 * Duplex whose readable side carries the decoded requests and whose writes are the responses.
 */
class StreamCall extends Duplex {
  cancelled = false
  readonly metadata = new grpc.Metadata()
  constructor(private readonly onResponse: (message: unknown, done: () => void) => void) {
    super({ objectMode: true, highWaterMark: 16 })
  }
  override _read(): void {}
  override _write(message: unknown, _: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.onResponse(message, () => callback())
  }
  getPeer(): string {
    return "gateway"
  }
  sendMetadata(): void {}
  cancel(): void {
    if (this.cancelled) return
    this.cancelled = true
    this.emit("cancelled")
  }
}

/** grpc-gateway's stream error chunk (runtime.StreamError). */
const streamError = (code: number, message: string): string => {
  const status = httpStatusFromCode(code)
  return `{"error":{"grpc_code":${code},"http_code":${status},"message":${goJsonString(message)},"http_status":${goJsonString(
    STATUS_TEXT[status] ?? ""
  )}}}`
}

const serveStream = (
  handler: grpc.handleBidiStreamingCall<unknown, unknown>,
  c: Codec,
  options: GatewayOptions,
  req: Http.IncomingMessage,
  res: Http.ServerResponse
): void => {
  let sentRequest = false
  const startResponse = () => {
    if (res.headersSent) return
    // grpc-gateway reads the call's header metadata only once a request went out
    res.writeHead(200, {
      "content-type": JSON_TYPE,
      ...(sentRequest ? { "grpc-metadata-content-type": "application/grpc" } : {}),
      // HTTP/1.1's chunks, as Go writes them; HTTP/2 has no such header (node refuses it)
      ...(req.httpVersionMajor < 2 ? { "transfer-encoding": "chunked" } : {})
    })
  }
  const call = new StreamCall((message, done) => {
    if (res.destroyed || res.writableEnded) return done()
    let line: string
    try {
      line = `{"result":${responseJson(c, message)}}\n`
    } catch (e) {
      // a response we cannot write (a bug): the stream ends as a failed one would
      call.cancel()
      finish(
        streamError(GrpcCode.Internal, `etcd-effect: internal error: ${e instanceof Error ? e.message : String(e)}`)
      )
      return done()
    }
    startResponse()
    const ok = res.write(line)
    if (ok) done()
    else res.once("drain", done)
  })
  forwardToken(req, call.metadata)
  let finished = false
  const finish = (chunk?: string) => {
    if (finished) return
    finished = true
    if (res.destroyed || res.writableEnded) return
    startResponse()
    res.end(chunk)
  }
  // OK: the writes are flushed when 'finish' comes; a failure: grpc-gateway's error chunk
  call.once("finish", () => finish())
  call.on("error", (status: { code?: number; details?: string }) => {
    finish(streamError(status.code ?? GrpcCode.Unknown, status.details ?? ""))
  })
  res.once("close", () => {
    if (!finished) call.cancel()
  })

  // the requests: every JSON value of the body, decoded as it arrives
  const decoder = new StringDecoder("utf8")
  let text = ""
  let pos = 0
  let started = false
  let stopped = false
  const limit = options.maxRequestBytes * 4 + 4096
  const pump = (complete: boolean): void => {
    try {
      pumpRequests(complete)
    } catch (e) {
      fail(e instanceof RangeError ? "request nested too deeply" : e instanceof Error ? e.message : String(e))
    }
  }
  const pumpRequests = (complete: boolean): void => {
    while (!stopped) {
      const next = decodeNext(text, pos, complete)
      if (next instanceof JsonSyntaxError) return fail(next.message)
      if (next._tag === "NeedMore") {
        if (text.length - pos > limit) return fail("grpc: received message larger than max")
        return
      }
      if (next._tag === "End") return stop()
      pos = next.end
      const request = toRequest(c, next.value, options.maxRequestBytes)
      if ("error" in request) return fail(request.error)
      start()
      sentRequest = true
      call.push(request.ok)
    }
  }
  const start = () => {
    if (started) return
    started = true
    handler(call as unknown as grpc.ServerDuplexStream<unknown, unknown>)
  }
  /** The body ended: half-close (a stream that never started is started, then closed at once). */
  const stop = () => {
    if (stopped) return
    stopped = true
    start()
    call.push(null)
  }
  const fail = (message: string) => {
    if (!started) {
      // grpc-gateway: the first request's error is the call's (status Unknown, HTTP 500)
      stopped = true
      finished = true
      const body = errorBody(GrpcCode.Unknown, message)
      res.writeHead(500, { "content-type": JSON_TYPE, "content-length": Buffer.byteLength(body) })
      res.end(body)
      req.resume()
      return
    }
    // a later one stops the requests (grpc-gateway logs it and closes the sending side)
    stop()
  }
  req.on("data", (chunk: Buffer) => {
    if (stopped) return
    text += decoder.write(chunk)
    pump(false)
    // the consumed part of the body is not kept
    if (pos > 65536) {
      text = text.slice(pos)
      pos = 0
    }
  })
  req.once("end", () => {
    if (stopped) return
    text += decoder.end()
    pump(true)
  })
  req.once("error", () => stop())
}

/**
 * The gateway as a request handler for /v3/ and /v3beta/ paths; `next` gets everything else.
 */
export const makeGatewayHandler = (services: ServiceHandlers, options: GatewayOptions) => {
  const codecs = new Map<Route, Codec>()
  return (req: Http.IncomingMessage, res: Http.ServerResponse, next: () => void): void => {
    const pathname = (req.url ?? "/").split("?")[0]!
    if (!isGatewayPath(pathname)) return next()
    const route = lookupRoute(pathname)
    if (route === undefined) return sendPlain(res, 404, "Not Found")
    if (req.method !== "POST") return sendPlain(res, 405, "Method Not Allowed")
    let c = codecs.get(route)
    if (c === undefined) codecs.set(route, (c = codec(route)))
    const handler = services[route.service][route.method]
    if (route.kind === "unary") {
      serveUnary(handler as grpc.handleUnaryCall<unknown, unknown>, c, options, req, res)
    } else {
      serveStream(handler as grpc.handleBidiStreamingCall<unknown, unknown>, c, options, req, res)
    }
  }
}
