/**
 * One grpc-js channel to the cluster, shared by every KV, Lease, Maintenance call and Watch stream
 * (clientv3's `conn`): HTTP/2 multiplexes them over one connection per endpoint.
 *
 * Unary calls use the proto-loader codecs of src/proto; they wait for a ready connection
 * (clientv3's FailFast(false)) and are bounded by `requestTimeout`. Interrupting the Effect cancels
 * the call.
 */
import * as grpc from "@grpc/grpc-js"
import { Context, Duration, Effect, Layer, type Scope, type Tracer } from "effect"
import { lookup } from "node:dns/promises"
import { isIP } from "node:net"
import { EtcdError, GrpcCode } from "../errors.js"
import { packageDefinition } from "../proto/index.js"
import { defaultDialTimeout, type EtcdClientConfig } from "./config.js"
import { type Endpoint, parseEndpoint } from "./endpoint.js"

export { parseEndpoint } from "./endpoint.js"

export interface UnaryMethod<Req, Res> {
  readonly path: string
  /** the call's span name, as OpenTelemetry names RPCs: `etcdserverpb.KV/Range` */
  readonly spanName: string
  readonly attributes: Readonly<Record<string, string>>
  readonly serialize: (value: Req) => Buffer
  readonly deserialize: (bytes: Buffer) => Res
}

/** A unary method of an etcdserverpb service, with proto-loader's codecs. */
export const unaryMethod = <Req, Res>(service: string, method: string): UnaryMethod<Req, Res> => {
  const def = packageDefinition[`etcdserverpb.${service}`] as grpc.ServiceDefinition | undefined
  const m = def?.[method]
  if (m === undefined) throw new Error(`etcd-effect: no method etcdserverpb.${service}/${method}`)
  return {
    path: m.path,
    spanName: `etcdserverpb.${service}/${method}`,
    attributes: { "rpc.system": "grpc", "rpc.service": `etcdserverpb.${service}`, "rpc.method": method },
    serialize: m.requestSerialize as (value: Req) => Buffer,
    deserialize: m.responseDeserialize as (bytes: Buffer) => Res
  }
}

/** The shared gRPC channel and the calls over it that the client's parts make. */
export interface ClientConnectionShape {
  readonly client: grpc.Client
  /** the configured metadata plus `extra`, as a fresh grpc Metadata with waitForReady set */
  readonly metadata: (extra?: Readonly<Record<string, string>>) => grpc.Metadata
  /** one unary call with the configured metadata, failing with etcd's error as an EtcdError */
  readonly unary: <Req, Res>(
    method: UnaryMethod<Req, Res>,
    request: Req,
    extra?: Readonly<Record<string, string>>
  ) => Effect.Effect<Res, EtcdError>
  /** the per-call deadline for unary calls, if configured */
  readonly requestTimeout: Duration.Duration | undefined
}

/** W3C trace context of `span`, the header gRPC metadata carries it in (otelgrpc's propagation) */
const traceparent = (span: Tracer.Span): string => `00-${span.traceId}-${span.spanId}-${span.sampled ? "01" : "00"}`

/** A gRPC status as etcd reports it: the status code and its description, verbatim. */
export const fromServiceError = (error: unknown): EtcdError => {
  if (typeof error === "object" && error !== null && "code" in error && typeof error.code === "number") {
    const code = error.code as GrpcCode
    const details = "details" in error && typeof error.details === "string" ? error.details : String(error)
    // grpc-js words deadlines its own way; clients of etcd know Go's text.
    if (code === GrpcCode.DeadlineExceeded) return new EtcdError({ code, message: "context deadline exceeded" })
    return new EtcdError({ code, message: details })
  }
  return new EtcdError({ code: GrpcCode.Unknown, message: error instanceof Error ? error.message : String(error) })
}

const AUTHENTICATE = unaryMethod<{ name: string; password: string }, { token: string }>("Auth", "Authenticate")
const AUTH_NOT_ENABLED = "etcdserver: authentication is not enabled"
/** the refusals after which clientv3 authenticates again */
const REFRESH_ON = new Set([
  "etcdserver: invalid auth token",
  "etcdserver: user name is empty",
  "etcdserver: revision of auth store is old"
])

const hostPort = (host: string, port: number) => (isIP(host) === 6 ? `[${host}]:${port}` : `${host}:${port}`)

/**
 * The grpc-js target. One endpoint: its host name (grpc's DNS resolver). Several: all resolved to
 * addresses now and given as one ipv4:/ipv6: list, so grpc's pick_first fails over between them.
 */
const target = (endpoints: ReadonlyArray<Endpoint>): Effect.Effect<string, EtcdError> => {
  if (endpoints.length === 1) return Effect.succeed(hostPort(endpoints[0]!.host, endpoints[0]!.port))
  return Effect.tryPromise({
    try: async () => {
      const v4: Array<string> = []
      const v6: Array<string> = []
      for (const e of endpoints) {
        const addresses =
          isIP(e.host) !== 0 ? [{ address: e.host, family: isIP(e.host) }] : await lookup(e.host, { all: true })
        for (const a of addresses) (a.family === 6 ? v6 : v4).push(hostPort(a.address, e.port))
      }
      return v4.length > 0 ? `ipv4:${v4.join(",")}` : `ipv6:${v6.join(",")}`
    },
    catch: (error) => new EtcdError({ code: GrpcCode.Unavailable, message: `resolving endpoints: ${String(error)}` })
  })
}

const pem = (value: Uint8Array | string | undefined): Buffer | null => (value === undefined ? null : Buffer.from(value))

const credentials = (config: EtcdClientConfig, tls: boolean): grpc.ChannelCredentials => {
  if (config.tls === undefined && !tls) return grpc.credentials.createInsecure()
  const t = config.tls ?? {}
  const verify: grpc.VerifyOptions =
    t.insecureSkipVerify === true ? { rejectUnauthorized: false, checkServerIdentity: () => undefined } : {}
  return grpc.credentials.createSsl(pem(t.ca), pem(t.key), pem(t.cert), verify)
}

/** Opens the channel and waits (up to the dial timeout) for it to connect; closes it with the scope. */
export const makeConnection = (
  config: EtcdClientConfig
): Effect.Effect<ClientConnectionShape, EtcdError, Scope.Scope> =>
  Effect.gen(function* () {
    if (config.endpoints.length === 0) {
      return yield* new EtcdError({ code: GrpcCode.InvalidArgument, message: "etcdclient: no available endpoints" })
    }
    const endpoints = yield* Effect.try({
      try: () => config.endpoints.map(parseEndpoint),
      catch: (error) => new EtcdError({ code: GrpcCode.InvalidArgument, message: String((error as Error).message) })
    })
    const address = yield* target(endpoints)
    const first = endpoints[0]!
    const options: grpc.ChannelOptions = {
      // etcd answers watch catch-ups in messages far above grpc's 4 MiB default (clientv3: MaxInt32).
      "grpc.max_receive_message_length": -1,
      "grpc.max_send_message_length": 2 * 1024 * 1024,
      "grpc.keepalive_time_ms": Duration.toMillis(config.keepAliveTime ?? Duration.seconds(30)),
      "grpc.keepalive_timeout_ms": Duration.toMillis(config.keepAliveTimeout ?? Duration.seconds(10)),
      // Reconnect soon after a server restart; grpc's default starts at 1 s and grows to 120 s.
      "grpc.initial_reconnect_backoff_ms": 50,
      "grpc.max_reconnect_backoff_ms": 1000,
      ...(config.tls?.serverName !== undefined
        ? { "grpc.ssl_target_name_override": config.tls.serverName, "grpc.default_authority": config.tls.serverName }
        : endpoints.length > 1
          ? { "grpc.default_authority": hostPort(first.host, first.port) }
          : {}),
      ...config.grpcOptions
    }
    const client = yield* Effect.acquireRelease(
      Effect.sync(
        () =>
          new grpc.Client(
            address,
            credentials(
              config,
              endpoints.some((e) => e.tls)
            ),
            options
          )
      ),
      (client) => Effect.sync(() => client.close())
    )
    const dialTimeout = Duration.decode(config.dialTimeout ?? defaultDialTimeout)
    yield* Effect.async<void, EtcdError>((resume) => {
      client.waitForReady(Date.now() + Duration.toMillis(dialTimeout), (error) => {
        resume(
          error === undefined
            ? Effect.void
            : Effect.fail(new EtcdError({ code: GrpcCode.DeadlineExceeded, message: "context deadline exceeded" }))
        )
      })
    })

    const base = config.metadata ?? {}
    /** the auth token, when credentials are configured and the server has auth on */
    let token: string | undefined
    const metadata = (extra?: Readonly<Record<string, string>>): grpc.Metadata => {
      const md = new grpc.Metadata({ waitForReady: true })
      for (const [k, v] of Object.entries(base)) md.set(k, v)
      if (token !== undefined) md.set("token", token)
      if (extra !== undefined) for (const [k, v] of Object.entries(extra)) md.set(k, v)
      return md
    }
    const requestTimeout = config.requestTimeout === undefined ? undefined : Duration.decode(config.requestTimeout)

    const call = <Req, Res>(
      method: UnaryMethod<Req, Res>,
      request: Req,
      extra?: Readonly<Record<string, string>>
    ): Effect.Effect<Res, EtcdError> =>
      Effect.async<Res, EtcdError>((resume) => {
        const callOptions: grpc.CallOptions =
          requestTimeout === undefined ? {} : { deadline: Date.now() + Duration.toMillis(requestTimeout) }
        const call = client.makeUnaryRequest(
          method.path,
          method.serialize,
          method.deserialize,
          request,
          metadata(extra),
          callOptions,
          (error, response) => {
            if (error !== null) resume(Effect.fail(fromServiceError(error)))
            else resume(Effect.succeed(response as Res))
          }
        )
        return Effect.sync(() => call.cancel())
      })

    /** clientv3's getToken: "authentication is not enabled" means no token */
    const authenticate: Effect.Effect<void, EtcdError> = Effect.suspend(() => {
      if (config.username === undefined) return Effect.void
      token = undefined
      return call(AUTHENTICATE, { name: config.username, password: config.password ?? "" }).pipe(
        Effect.map((r) => {
          token = r.token
        }),
        Effect.catchIf(
          (e) => e.message === AUTH_NOT_ENABLED,
          () => Effect.void
        )
      )
    })
    yield* authenticate

    const retried = <Req, Res>(
      method: UnaryMethod<Req, Res>,
      request: Req,
      extra?: Readonly<Record<string, string>>
    ): Effect.Effect<Res, EtcdError> =>
      config.username === undefined
        ? call(method, request, extra)
        : call(method, request, extra).pipe(
            // clientv3's shouldRefreshToken: authenticate again, then one more try
            Effect.catchIf(
              (e) => REFRESH_ON.has(e.message),
              () => Effect.zipRight(authenticate, call(method, request, extra))
            )
          )

    /** each call a client span (`etcdserverpb.KV/Put`), passed on to the server as `traceparent` */
    const unary = <Req, Res>(
      method: UnaryMethod<Req, Res>,
      request: Req,
      extra?: Readonly<Record<string, string>>
    ): Effect.Effect<Res, EtcdError> =>
      Effect.useSpan(
        method.spanName,
        { kind: "client", captureStackTrace: false, attributes: method.attributes },
        (span) => retried(method, request, { ...extra, traceparent: traceparent(span) })
      )

    return { client, metadata, unary, requestTimeout } satisfies ClientConnectionShape
  })

/** The client's channel as a service: what its KV, Lease, Maintenance and Watch parts share. */
export class ClientConnection extends Context.Tag("etcd-effect/client/ClientConnection")<
  ClientConnection,
  ClientConnectionShape
>() {
  /** Dials the cluster; the layer's scope closes the channel. */
  static readonly layer = (config: EtcdClientConfig): Layer.Layer<ClientConnection, EtcdError> =>
    Layer.scoped(ClientConnection, makeConnection(config))
}
