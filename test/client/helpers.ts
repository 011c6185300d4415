/**
 * Shared pieces of the client suites: running an Effect against a client layer, writing a known
 * history (the oracle the watch must reproduce), and checking delivered responses against it.
 */
import { type Duration, Effect, Layer, type Scope, Stream } from "effect"
import { EtcdClient, type EtcdClientOptions, type EtcdClientShape, make, Op } from "../../src/client/index.js"
import type { WatchResponse } from "../../src/client/index.js"
import { afterAll, beforeAll } from "vitest"
import { FaultProxy } from "../support/fault-proxy.js"
import type { ServerOptions, ServerTarget, TestServer } from "../support/servers.js"

export const clientLayer = (endpoint: string, options: Partial<EtcdClientOptions> = {}) =>
  EtcdClient.layer({ endpoints: [endpoint], dialTimeout: "10 seconds", ...options })

/** Runs `f` with a client on `endpoint`, closing the client afterwards. */
export const withClient = <A, E>(
  endpoint: string,
  f: (client: EtcdClientShape) => Effect.Effect<A, E, Scope.Scope>,
  options: Partial<EtcdClientOptions> = {}
): Promise<A> =>
  Effect.runPromise(Effect.scoped(Effect.flatMap(EtcdClient, f)).pipe(Effect.provide(clientLayer(endpoint, options))))

/** A client living in the current scope (for a second client beside a provided one). */
export const scopedClient = (endpoint: string, options: Partial<EtcdClientOptions> = {}) =>
  make({ endpoints: [endpoint], dialTimeout: "10 seconds", ...options })

export const provideClient = (endpoint: string, options: Partial<EtcdClientOptions> = {}) =>
  Effect.provide(Layer.fresh(clientLayer(endpoint, options)))

const text = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString()

/** An event as the oracle knows it. */
export interface Expected {
  readonly rev: bigint
  readonly type: 0 | 1
  readonly key: string
  readonly value: string
}

export const flatten = (responses: ReadonlyArray<WatchResponse>): Array<Expected> =>
  responses.flatMap((r) =>
    r.events.map((e) => ({ rev: e.kv.modRevision, type: e.type, key: text(e.kv.key), value: text(e.kv.value) }))
  )

/**
 * Writes `count` revisions under `prefix` with up to `concurrency` requests in flight: mostly
 * single puts, every `txnEvery`-th a txn of three puts, every `deleteEvery`-th a delete. Returns
 * the history as the server committed it (by each write's revision), the oracle for watches.
 */
export const writeHistory = (
  client: EtcdClientShape,
  options: {
    readonly prefix: string
    readonly count: number
    readonly concurrency?: number
    readonly valueBytes?: number
    readonly txnEvery?: number
    readonly deleteEvery?: number
    readonly keys?: number
  }
): Effect.Effect<Array<Expected>, unknown> => {
  const keys = options.keys ?? 40
  const pad = "x".repeat(Math.max(0, (options.valueBytes ?? 16) - 8))
  const txnEvery = options.txnEvery ?? 7
  const deleteEvery = options.deleteEvery ?? 11
  return Effect.forEach(
    Array.from({ length: options.count }, (_, i) => i),
    (i): Effect.Effect<Array<Expected>, unknown> => {
      const key = `${options.prefix}${i % keys}`
      const value = `v${i}-${pad}`
      if (i % deleteEvery === deleteEvery - 1) {
        // A key of its own, put then deleted: two revisions, the second a DELETE event.
        const k = `${options.prefix}d${i}`
        return Effect.zipWith(client.kv.put(k, value), client.kv.delete(k), (p, d): Array<Expected> => [
          { rev: p.header.revision, type: 0, key: k, value },
          { rev: d.header.revision, type: 1, key: k, value: "" }
        ])
      }
      if (i % txnEvery === txnEvery - 1) {
        const ks = [0, 1, 2].map((j) => `${options.prefix}t${(i + j) % keys}`)
        return Effect.map(client.kv.txn().success(...ks.map((k) => Op.put(k, value))).commit, (r) =>
          ks.map((k) => ({ rev: r.header.revision, type: 0, key: k, value }) as const)
        )
      }
      return Effect.map(client.kv.put(key, value), (r) => [{ rev: r.header.revision, type: 0, key, value }])
    },
    { concurrency: options.concurrency ?? 32 }
  ).pipe(Effect.map((batches) => batches.flat().sort((a, b) => (a.rev < b.rev ? -1 : a.rev > b.rev ? 1 : 0))))
}

export const lastRevision = (history: ReadonlyArray<Expected>): bigint => history[history.length - 1]!.rev

/**
 * Collects a watch until it delivered an event at or after `until`, or until it stays silent for
 * `idle` (then the comparison with the history shows what is missing, instead of a test timeout).
 */
export const collectUntil = (
  stream: Stream.Stream<WatchResponse, unknown>,
  until: bigint,
  idle: Duration.DurationInput = "8 seconds"
) =>
  stream.pipe(
    Stream.timeout(idle),
    Stream.takeUntil((r) => r.events.length > 0 && r.events[r.events.length - 1]!.kv.modRevision >= until),
    Stream.runCollect,
    Effect.map((c) => Array.from(c))
  )

const show = (e: Expected | undefined) =>
  e === undefined ? "nothing" : `${e.type === 0 ? "PUT" : "DELETE"} ${e.key}@${e.rev}`

/**
 * The watch guarantees against the oracle: exactly the history (no loss, no duplicate, same order,
 * same content), and atomic responses (no revision split across two responses). Returns the
 * problems found, [] when none: `expect(historyProblems(...)).toEqual([])`.
 */
export const historyProblems = (
  responses: ReadonlyArray<WatchResponse>,
  history: ReadonlyArray<Expected>
): Array<string> => {
  const problems: Array<string> = []
  const delivered = flatten(responses)
  if (delivered.length !== history.length)
    problems.push(`delivered ${delivered.length} events, history has ${history.length}`)
  for (let i = 0; i < Math.max(delivered.length, history.length); i++) {
    const d = delivered[i]
    const h = history[i]
    if (
      d === undefined ||
      h === undefined ||
      d.rev !== h.rev ||
      d.type !== h.type ||
      d.key !== h.key ||
      d.value !== h.value
    ) {
      problems.push(`event #${i}: delivered ${show(d)}, history ${show(h)}`)
      break
    }
  }
  let previousLast = -1n
  for (const r of responses) {
    if (r.events.length === 0) continue
    const first = r.events[0]!.kv.modRevision
    if (first <= previousLast)
      problems.push(`revision ${first} split across responses (previous ended at ${previousLast})`)
    previousLast = r.events[r.events.length - 1]!.kv.modRevision
  }
  return problems
}

/**
 * For the enclosing describe block: the target's server, and a fault proxy in front of it that
 * the tests connect through. Read them in tests (not at collection time): `env.server`, `env.proxy`.
 */
export const useProxiedServer = (target: ServerTarget, options?: ServerOptions) => {
  let server: TestServer | undefined
  let proxy: FaultProxy | undefined
  beforeAll(async () => {
    server = await target.start(options)
    const [host, port] = server.endpoint.split(":")
    proxy = await FaultProxy.start(host!, Number(port))
  })
  afterAll(async () => {
    await proxy?.close()
    await server?.dispose()
  })
  return {
    get server(): TestServer {
      return server!
    },
    get proxy(): FaultProxy {
      return proxy!
    }
  }
}
