/**
 * An HTTP/2 request that is not gRPC, on the lean transport: as etcd's mux sends a request whose
 * content-type is not application/grpc to its HTTP handlers (embed/serve.go, grpcHandlerFunc), the
 * connection gives it to the client port's node:http handler (client-http.ts: the JSON gateway,
 * /health, /metrics, …) through the request and response objects node:http handlers use — the
 * members they touch: method, url, headers and the body as a stream; statusCode, setHeader,
 * writeHead, write (false until "drain"), end, addTrailers, headersSent, writableEnded,
 * writableFinished, "close". The connection frames what the response writes, under HTTP/2 flow
 * control; a reset or a lost connection destroys both, as node's compat layer does.
 */
import { EventEmitter } from "node:events"
import type * as Http from "node:http"
import { Readable } from "node:stream"
import { type HeaderList, pushInteger, pushLiteral } from "../../h2/hpack.js"
import { H2Stream, type StreamOwner } from "./h2-stream.js"

export type HttpHandler = (req: Http.IncomingMessage, res: Http.ServerResponse) => void

/** a writer waits for "drain" once this much is queued (node's default highWaterMark) */
const HIGH_WATER = 16 * 1024

/** hop-by-hop fields HTTP/2 forbids (RFC 9113 §8.2.2): node:http handlers may set them */
const CONNECTION_FIELDS = new Set(["connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade"])

type FieldValue = string | number | ReadonlyArray<string>

/** A header block: `:status` (indexed when the static table has it), then the fields, literal. */
const encodeFields = (status: number | undefined, fields: Iterable<readonly [string, FieldValue]>): Buffer => {
  const out: Array<number> = []
  if (status !== undefined) {
    const indexed: Record<number, number> = { 200: 8, 204: 9, 206: 10, 304: 11, 400: 12, 404: 13, 500: 14 }
    if (indexed[status] !== undefined) pushInteger(out, 0x80, 7, indexed[status])
    else pushLiteral(out, 8, ":status", String(status))
  }
  for (const [name, value] of fields) {
    if (CONNECTION_FIELDS.has(name)) continue
    const values = Array.isArray(value) ? value : [String(value)]
    for (const v of values) pushLiteral(out, 0, name, v)
  }
  return Buffer.from(out)
}

/** The request, as node:http's IncomingMessage shows it. */
class Request extends Readable {
  readonly httpVersion = "2.0"
  readonly httpVersionMajor = 2
  readonly httpVersionMinor = 0
  complete = false

  constructor(
    readonly method: string,
    readonly url: string,
    readonly headers: Record<string, string>,
    readonly rawHeaders: Array<string>,
    readonly socket: { readonly remoteAddress?: string | undefined; readonly remotePort?: number | undefined },
    private readonly onRead: () => void
  ) {
    super()
  }

  get connection() {
    return this.socket
  }

  override _read(): void {
    this.onRead()
  }
}

/** The response, as node:http's ServerResponse shows it to the handlers. */
class Response extends EventEmitter {
  statusCode = 200
  statusMessage = ""
  writableEnded = false
  writableFinished = false
  destroyed = false
  sendDate = false
  private readonly fields = new Map<string, FieldValue>()
  private trailers: Array<readonly [string, string]> = []
  private committed = false

  constructor(private readonly stream: HttpStream) {
    super()
  }

  get headersSent(): boolean {
    return this.stream.headersSent
  }

  get writableNeedDrain(): boolean {
    return this.stream.outBytes >= HIGH_WATER
  }

  setHeader(name: string, value: FieldValue): this {
    if (this.committed) throw new Error("Cannot set headers after they are sent to the client")
    this.fields.set(name.toLowerCase(), value)
    return this
  }

  getHeader(name: string): FieldValue | undefined {
    return this.fields.get(name.toLowerCase())
  }

  getHeaders(): Record<string, FieldValue> {
    return Object.fromEntries(this.fields)
  }

  getHeaderNames(): Array<string> {
    return [...this.fields.keys()]
  }

  hasHeader(name: string): boolean {
    return this.fields.has(name.toLowerCase())
  }

  removeHeader(name: string): void {
    if (!this.committed) this.fields.delete(name.toLowerCase())
  }

  writeHead(status: number, reason?: string | Http.OutgoingHttpHeaders, headers?: Http.OutgoingHttpHeaders): this {
    if (this.committed) throw new Error("Cannot write headers after they are sent to the client")
    this.statusCode = status
    const extra = typeof reason === "object" ? reason : headers
    if (extra !== undefined) {
      for (const [k, v] of Object.entries(extra)) if (v !== undefined) this.fields.set(k.toLowerCase(), v)
    }
    this.committed = true
    return this
  }

  flushHeaders(): void {
    this.committed = true
    this.stream.sendHeaders()
  }

  addTrailers(headers: Record<string, string>): void {
    for (const [k, v] of Object.entries(headers)) this.trailers.push([k.toLowerCase(), String(v)])
  }

  setTimeout(): this {
    return this
  }

  write(chunk: string | Uint8Array, encoding?: BufferEncoding | (() => void), cb?: () => void): boolean {
    this.committed = true
    const done = typeof encoding === "function" ? encoding : cb
    const ok = this.stream.writeBody(
      typeof chunk === "string" ? Buffer.from(chunk, typeof encoding === "string" ? encoding : "utf8") : chunk
    )
    if (done !== undefined) process.nextTick(done)
    return ok
  }

  end(chunk?: string | Uint8Array | (() => void), encoding?: BufferEncoding | (() => void), cb?: () => void): this {
    if (this.writableEnded) return this
    const done = [chunk, encoding, cb].find((a) => typeof a === "function") as (() => void) | undefined
    if (chunk !== undefined && typeof chunk !== "function") this.write(chunk, encoding as BufferEncoding)
    this.committed = true
    this.writableEnded = true
    if (done !== undefined) this.once("finish", done)
    this.stream.endBody()
    return this
  }

  destroy(): this {
    this.stream.abort()
    return this
  }

  /** the response's header block */
  headerBlock(): Buffer {
    this.committed = true
    return encodeFields(this.statusCode, this.fields)
  }

  trailerBlock(): Buffer | undefined {
    return this.trailers.length === 0 ? undefined : encodeFields(undefined, this.trailers)
  }
}

/** The stream of one plain HTTP/2 request on the lean transport. */
export class HttpStream extends H2Stream {
  readonly req: Request
  readonly res: Response
  private readonly head: boolean
  /** received bytes not given back to the window: held while the handler does not read */
  private held = 0
  private needDrain = false

  constructor(
    id: number,
    headers: HeaderList,
    private readonly owner: StreamOwner,
    sendWindow: number,
    recvWindow: number,
    peer: { readonly remoteAddress?: string | undefined; readonly remotePort?: number | undefined }
  ) {
    super(id, sendWindow, recvWindow)
    let method = "GET"
    let path = "/"
    let authority: string | undefined
    const fields: Record<string, string> = {}
    const raw: Array<string> = []
    for (let i = 0; i < headers.length; i += 2) {
      const name = headers[i]!
      const value = headers[i + 1]!
      if (name === ":method") method = value
      else if (name === ":path") path = value
      else if (name === ":authority") authority = value
      else if (name.charCodeAt(0) !== 58 /* ':' */) {
        raw.push(name, value)
        const had = fields[name]
        fields[name] = had === undefined ? value : `${had}${name === "cookie" ? "; " : ", "}${value}`
      }
    }
    if (fields["host"] === undefined && authority !== undefined) fields["host"] = authority
    this.head = method === "HEAD"
    this.req = new Request(method, path, fields, raw, peer, () => this.release())
    this.res = new Response(this)
  }

  /** Hands the request to `handler` (a throw is a 500, as node's server would close the stream). */
  run(handler: HttpHandler): void {
    try {
      handler(this.req as unknown as Http.IncomingMessage, this.res as unknown as Http.ServerResponse)
    } catch {
      if (!this.headersSent && !this.finished) this.res.writeHead(500).end()
      else this.owner.reset(this, 2 /* INTERNAL_ERROR */)
    }
  }

  // ------------------------------------------------------------------ from the connection

  data(buf: Uint8Array, start: number, end: number): void {
    this.held += end - start
    if (this.req.push(Buffer.from(buf.subarray(start, end)))) this.release()
  }

  private release(): void {
    if (this.held === 0 || this.finished) return
    this.owner.consumed(this, this.held)
    this.held = 0
  }

  remoteEnd(): void {
    this.remoteEnded = true
    this.req.complete = true
    this.req.push(null)
  }

  cancel(): void {
    if (this.res.destroyed) return
    this.finished = true
    this.res.destroyed = true
    this.req.emit("aborted")
    this.req.destroy()
    process.nextTick(() => this.res.emit("close"))
  }

  sent(): void {
    if (this.needDrain && this.outBytes < HIGH_WATER) {
      this.needDrain = false
      this.res.emit("drain")
    }
  }

  headerBlock(): Uint8Array {
    return this.res.headerBlock()
  }

  endBlock(): Uint8Array | undefined {
    const trailers = this.res.trailerBlock()
    if (this.headersSent) return trailers
    // no body went out: the headers end the stream, or go before the trailers
    if (trailers === undefined) return this.res.headerBlock()
    this.owner.writeHeaders(this)
    return trailers
  }

  override ended(): void {
    this.res.writableFinished = true
    this.res.emit("finish")
    process.nextTick(() => {
      this.res.emit("close")
      this.req.emit("close")
    })
  }

  // ------------------------------------------------------------------ from the response

  sendHeaders(): void {
    if (!this.finished) this.owner.writeHeaders(this)
  }

  writeBody(chunk: Uint8Array): boolean {
    if (this.finished) return false
    if (chunk.length > 0 && !this.head) {
      this.out.push(chunk)
      this.outBytes += chunk.length
    }
    this.owner.flush(this)
    if (this.outBytes >= HIGH_WATER) {
      this.needDrain = true
      return false
    }
    return true
  }

  endBody(): void {
    if (this.finished) return
    this.finished = true
    this.statusPending = true
    this.owner.flush(this)
  }

  abort(): void {
    if (this.closed) return
    this.owner.reset(this, 8 /* CANCEL */)
  }
}
