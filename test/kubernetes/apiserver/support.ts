/**
 * The apiserver in the test process (port 0, an embedded in-memory etcd-effect unless etcd
 * endpoints are given) and small HTTP helpers: JSON requests and NDJSON watches read line by line.
 */
import { Effect, Exit, Logger, LogLevel, Scope } from "effect"
import * as http from "node:http"
import { afterAll, beforeAll } from "vitest"
import { type ApiServerConfig, type RunningApiServer, serve } from "../../../src/kubernetes/apiserver/server.js"

export interface TestApiServer {
  readonly url: string
  readonly running: RunningApiServer
  close(): Promise<void>
}

export const startApiServer = async (options: Partial<ApiServerConfig> = {}): Promise<TestApiServer> => {
  const scope = Effect.runSync(Scope.make())
  const running = await Effect.runPromise(
    Scope.extend(serve({ port: 0, ...options }), scope).pipe(Logger.withMinimumLogLevel(LogLevel.Error))
  )
  let closed = false
  return {
    url: running.url,
    running,
    close: async () => {
      if (closed) return
      closed = true
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  }
}

/** One apiserver for the describe block (a getter: it exists once beforeAll has run). */
export const onApiServer = (options: Partial<ApiServerConfig> = {}): (() => TestApiServer) => {
  let server: TestApiServer | undefined
  beforeAll(async () => {
    server = await startApiServer(options)
  })
  afterAll(async () => {
    await server?.close()
  })
  return () => server!
}

export interface Reply {
  readonly status: number
  readonly headers: Headers
  readonly body: any
  readonly text: string
}

export const request = async (
  base: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {}
): Promise<Reply> => {
  const init: RequestInit = { method, headers: { ...headers } }
  if (body !== undefined) {
    init.body = typeof body === "string" || body instanceof Uint8Array ? (body as string) : JSON.stringify(body)
    ;(init.headers as Record<string, string>)["content-type"] ??= "application/json"
  }
  const res = await fetch(base + path, init)
  const text = await res.text()
  let parsed: unknown = undefined
  try {
    parsed = JSON.parse(text)
  } catch {
    parsed = undefined
  }
  return { status: res.status, headers: res.headers, body: parsed, text }
}

/**
 * Polls until `f` holds: for what the server does after it answers (a CRD is served once its
 * controller saw it, a metric once the cache took the event). No deadline of its own, so no claim
 * about how long that takes on a loaded machine; the test's timeout ends a wait that never ends.
 */
export const until = async (f: () => Promise<boolean>): Promise<void> => {
  while (!(await f())) await new Promise((r) => setTimeout(r, 10))
}

let counter = 0
/** A fresh namespace for one test. */
export const newNamespace = async (base: string, prefix = "t"): Promise<string> => {
  const name = `${prefix}-${process.pid}-${counter++}`
  const r = await request(base, "POST", "/api/v1/namespaces", { metadata: { name } })
  if (r.status !== 201) throw new Error(`namespace ${name}: ${r.status} ${r.text}`)
  return name
}

export const configMap = (name: string, data: Record<string, string> = {}, labels?: Record<string, string>) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: labels === undefined ? { name } : { name, labels },
  data
})

export interface WatchReader {
  /** the HTTP status and headers once they arrived */
  readonly response: Promise<http.IncomingMessage>
  /** every line so far, parsed */
  readonly events: Array<any>
  /** the raw body so far */
  raw: string
  /** resolves when the server ends the stream */
  readonly ended: Promise<void>
  /** waits until `n` events have arrived (or fails after `ms`) */
  waitFor(n: number, ms?: number): Promise<Array<any>>
  close(): void
}

/** A watch over plain node:http (one socket each, as a client library would). */
export const watch = (base: string, path: string, agent?: http.Agent): WatchReader => {
  const events: Array<any> = []
  let endResolve!: () => void
  const ended = new Promise<void>((r) => (endResolve = r))
  let waiters: Array<() => void> = []
  const reader: WatchReader = {
    response: undefined as never,
    events,
    raw: "",
    ended,
    waitFor: (n, ms = 10_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          if (events.length >= n) {
            clearTimeout(timer)
            resolve(events)
            return true
          }
          return false
        }
        const timer = setTimeout(
          () => reject(new Error(`timed out waiting for ${n} events, got ${events.length}: ${reader.raw.slice(-500)}`)),
          ms
        )
        const loop = () => {
          if (!check()) waiters.push(loop)
        }
        loop()
      }),
    close: () => req.destroy()
  }
  let buf = ""
  const req = http.get(base + path, agent === undefined ? {} : { agent })
  ;(reader as { response: Promise<http.IncomingMessage> }).response = new Promise((resolve, reject) => {
    req.on("response", (res) => {
      resolve(res)
      res.setEncoding("utf8")
      res.on("data", (chunk: string) => {
        reader.raw += chunk
        buf += chunk
        let i: number
        while ((i = buf.indexOf("\n")) >= 0) {
          const line = buf.slice(0, i)
          buf = buf.slice(i + 1)
          if (line !== "") events.push(JSON.parse(line))
        }
        const w = waiters
        waiters = []
        for (const f of w) f()
      })
      res.on("end", endResolve)
      res.on("close", endResolve)
    })
    req.on("error", (e) => {
      reject(e)
      endResolve()
    })
  })
  reader.response.catch(() => {})
  return reader
}

/** A CRD of example.com (a schema-less version v1; optional printer column Size = .spec.size). */
export const widgetCRD = (opts: { plural?: string; scope?: "Namespaced" | "Cluster"; columns?: boolean } = {}) => {
  const plural = opts.plural ?? "widgets"
  const kind = plural[0]!.toUpperCase() + plural.slice(1, -1)
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${plural}.example.com` },
    spec: {
      group: "example.com",
      scope: opts.scope ?? "Namespaced",
      names: { plural, singular: plural.slice(0, -1), kind, shortNames: [plural.slice(0, 2)] },
      versions: [
        {
          name: "v1",
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
          ...(opts.columns === true
            ? { additionalPrinterColumns: [{ name: "Size", type: "integer", jsonPath: ".spec.size" }] }
            : {})
        }
      ]
    }
  }
}

/** A namespaced CRD of `group` with one version v1 of the given openAPIV3Schema. */
export const schemaCRD = (group: string, plural: string, kind: string, openAPIV3Schema: unknown) => ({
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: `${plural}.${group}` },
  spec: {
    group,
    scope: "Namespaced",
    names: { plural, singular: plural.slice(0, -1), kind },
    versions: [{ name: "v1", served: true, storage: true, schema: { openAPIV3Schema } }]
  }
})
