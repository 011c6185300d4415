/**
 * etcd's HTTP endpoints (etcdhttp), on @effect/platform's HTTP server: GET /metrics (Prometheus
 * text 0.0.4, gzip when asked as promhttp does), /health (etcd 3.5's JSON), /livez and /readyz
 * (etcd 3.6's text checks, also one check at a time: /readyz/linearizable_read), and on the client
 * port also /version. Anything else: 404 as Go's mux words it.
 *
 * Served two ways, as etcd does: on every client URL (`makeClientHandler`, a request handler for
 * the HTTP/1 side of cmux.ts) and on each --listen-metrics-urls address (`serveMetrics`, one
 * node:http server per URL in the caller's scope; closing it stops listening, closes idle
 * keep-alive connections at once and any connection still open after a second).
 *
 * Loaded on demand (through listener.ts, when the server starts): the HTTP stack would otherwise
 * add to every start of the program, client commands included.
 */
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Effect, type Scope } from "effect"
import * as Http from "node:http"
import * as Https from "node:https"
import * as zlib from "node:zlib"
import type { MvccStoreShape } from "../../mvcc/kv.js"
import type { ListenAddress } from "../config.js"
import { boundUrl, listenError } from "../listener.js"
import type { ServeError } from "../serve-error.js"
import type { TlsSource } from "../tls-context.js"
import { checkHealth, type HealthCheck, type HealthCounters, livezChecks, readyzChecks, runChecks } from "./health.js"
import { type Collector, CONTENT_TYPE, writeFamilies } from "./prometheus.js"

export interface MetricsEndpoints {
  readonly collectors: ReadonlyArray<Collector>
  readonly store: MvccStoreShape
  readonly health: HealthCounters
  /** the names of the alarms that are up ("NOSPACE"), for /health */
  readonly alarms?: (() => ReadonlyArray<string>) | undefined
}

const TEXT = "text/plain; charset=utf-8"

/** Go's http.Error: the text and a newline, text/plain, nosniff. */
const httpError = (status: number, text: string, headers: Record<string, string> = {}) =>
  HttpServerResponse.text(`${text}\n`, {
    status,
    contentType: TEXT,
    headers: { "x-content-type-options": "nosniff", ...headers }
  })

const notFound = httpError(404, "404 page not found")
const methodNotAllowed = httpError(405, "Method Not Allowed", { allow: "GET" })

const requestUrl = Effect.map(HttpServerRequest.HttpServerRequest, (req) => ({
  method: req.method,
  url: new URL(req.url, "http://localhost"),
  acceptsGzip: /\bgzip\b/.test(req.headers["accept-encoding"] ?? "")
}))

/** Only GET, as etcd's health handlers. */
const getOnly = <E, R>(handler: (url: URL) => Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
  Effect.flatMap(requestUrl, (r) => (r.method === "GET" ? handler(r.url) : Effect.succeed(methodNotAllowed)))

const metrics = (collectors: ReadonlyArray<Collector>) =>
  Effect.flatMap(requestUrl, (r) =>
    Effect.map(Effect.all(collectors), (groups) => {
      const body = writeFamilies(groups.flat())
      if (!r.acceptsGzip) {
        return HttpServerResponse.text(body, { contentType: CONTENT_TYPE, headers: { vary: "Accept-Encoding" } })
      }
      // ~100 KB of text (mostly zero counters) becomes ~5 KB
      return HttpServerResponse.uint8Array(zlib.gzipSync(body), {
        contentType: CONTENT_TYPE,
        headers: { "content-encoding": "gzip", vary: "Accept-Encoding" }
      })
    })
  )

const health = (endpoints: MetricsEndpoints) =>
  getOnly((url) =>
    Effect.map(
      checkHealth(
        endpoints.store,
        {
          serializable: url.searchParams.get("serializable") === "true",
          exclude: new Set(url.searchParams.getAll("exclude").filter((a) => a !== ""))
        },
        endpoints.alarms
      ),
      (h) => {
        if (h.health === "true") endpoints.health.success++
        else endpoints.health.failures++
        const json = JSON.stringify({ health: h.health, reason: h.reason })
        // etcd writes the JSON without a Content-Type, so Go's sniffing makes it text/plain
        return h.health === "true" ? HttpServerResponse.text(json, { contentType: TEXT }) : httpError(503, json)
      }
    )
  )

/** etcd's /livez and /readyz: "ok" (after each check's line with ?verbose), or 503 with the lines. */
const checks = (pick: (url: URL) => ReadonlyArray<HealthCheck>) =>
  getOnly((url) =>
    Effect.map(runChecks(pick(url)), (report) =>
      report.ok
        ? HttpServerResponse.text(`${url.searchParams.has("verbose") ? report.text : ""}ok\n`, {
            contentType: TEXT,
            headers: { "x-content-type-options": "nosniff" }
          })
        : httpError(503, report.text)
    )
  )

/** A check registry at `root`, and each check alone at root/name (etcd's CheckRegistry). */
const registry =
  (root: `/${string}`, all: ReadonlyArray<HealthCheck>) =>
  <E, R>(router: HttpRouter.HttpRouter<E, R>): HttpRouter.HttpRouter<E, R> => {
    let out = HttpRouter.all(
      router,
      root,
      checks((url) => {
        const excluded = new Set(url.searchParams.getAll("exclude"))
        return all.filter((c) => !excluded.has(c.name))
      })
    )
    for (const check of all)
      out = HttpRouter.all(
        out,
        `${root}/${check.name}`,
        checks(() => [check])
      )
    return out
  }

/**
 * etcd's /version: the server's version and the cluster's (its major.minor.0), GET only, JSON.
 */
const version = (serverVersion: string) => {
  const [major = "0", minor = "0"] = serverVersion.split(".")
  const body = JSON.stringify({ etcdserver: serverVersion, etcdcluster: `${major}.${minor}.0` })
  return getOnly(() => Effect.succeed(HttpServerResponse.text(body, { contentType: "application/json" })))
}

const app = (endpoints: MetricsEndpoints, serverVersion?: string) => {
  let router = HttpRouter.empty.pipe(
    HttpRouter.all("/metrics", metrics(endpoints.collectors)),
    HttpRouter.all("/health", health(endpoints)),
    registry("/livez", livezChecks(endpoints.store)),
    registry("/readyz", readyzChecks(endpoints.store))
  )
  if (serverVersion !== undefined) router = HttpRouter.all(router, "/version", version(serverVersion))
  return Effect.catchTag(router, "RouteNotFound", () => Effect.succeed(notFound))
}

/** The endpoints and /version as a node:http request handler, for the client port. */
export const makeClientHandler = (
  endpoints: MetricsEndpoints,
  serverVersion: string
): Effect.Effect<(req: Http.IncomingMessage, res: Http.ServerResponse) => void> =>
  NodeHttpServer.makeHandler(app(endpoints, serverVersion))

/**
 * An https server over the TLS source: each new connection picks up renewed certificate files
 * (the same reload as the client URLs).
 */
const httpsServer = (source: TlsSource): Http.Server => {
  const server = Https.createServer(source.options())
  let generation = source.generation()
  server.prependListener("connection", () => {
    const options = source.options()
    if (source.generation() !== generation) {
      generation = source.generation()
      server.setSecureContext(options)
    }
  })
  // an https.Server is an http.Server over TLS sockets (the platform uses only what both have)
  return server as unknown as Http.Server
}

/** One listener; its bound URL. https URLs serve with the client certificate, as etcd's. */
const listen = (
  addr: ListenAddress,
  endpoints: MetricsEndpoints,
  tls: TlsSource | undefined
): Effect.Effect<string, ServeError, Scope.Scope> =>
  Effect.gen(function* () {
    let node: Http.Server | undefined
    // URL hostnames keep IPv6 brackets ("[::1]"); listen() wants the bare address
    const host = addr.host.replace(/^\[(.*)\]$/, "$1")
    const make = () => (node = addr.https && tls !== undefined ? httpsServer(tls) : Http.createServer())
    const server = yield* NodeHttpServer.make(make, { host, port: addr.port }).pipe(
      Effect.mapError((e) => listenError(addr, e.cause))
    )
    // runs before the platform's close (which waits for every connection): a scrape or health
    // check in flight gets a second, idle keep-alive connections none
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        const s = node
        if (s === undefined) return
        s.closeIdleConnections()
        const force = setTimeout(() => s.closeAllConnections(), 1000)
        force.unref()
        s.once("close", () => clearTimeout(force))
      })
    )
    yield* server.serve(app(endpoints))
    const port = server.address._tag === "TcpAddress" ? server.address.port : addr.port
    return boundUrl(addr, port)
  })

/** Serves the endpoints on every address in the current scope; the bound URLs, in order. */
export const serveMetrics = (
  addrs: ReadonlyArray<ListenAddress>,
  endpoints: MetricsEndpoints,
  tls?: TlsSource
): Effect.Effect<ReadonlyArray<string>, ServeError, Scope.Scope> =>
  Effect.forEach(addrs, (addr) => listen(addr, endpoints, tls))
