/**
 * What the storage conformance suite (the apiserver's pkg/storage/testing, ported) runs against:
 * a Backend gives fresh stores (each test its own random path prefix, so tests never see each
 * other's keys) over one client, and how to compact that etcd.
 */
import { Chunk, Effect, Exit, Fiber, Scope, Stream } from "effect"
import { expect } from "vitest"
import { type EtcdClientShape, make as makeClient } from "../../../../src/client/index.js"
import type { KubeObject } from "../../../../src/kubernetes/api/object-meta.js"
import type { StatusError } from "../../../../src/kubernetes/api/status.js"
import type { WatchEvent } from "../../../../src/kubernetes/api/watch-event.js"
import type { StorageShape } from "../../../../src/kubernetes/storage/interfaces.js"
import { Everything, type SelectionPredicate } from "../../../../src/kubernetes/storage/selection-predicate.js"
import { parsePredicate } from "../../../../src/kubernetes/storage/selection-predicate.js"
import type { ValueTransformer } from "../../../../src/kubernetes/storage/value/transformer.js"

export interface StoreOptions {
  readonly transformer?: ValueTransformer
  readonly client?: EtcdClientShape
}

export interface Backend {
  readonly name: string
  /** a store over "/pods/" under a fresh random path prefix */
  readonly newStore: (options?: StoreOptions) => TestStore
  readonly client: EtcdClientShape
  /** compacts etcd through compact_rev_key at `rev` (default: everything); the compaction writes one revision */
  readonly compact: (rev?: bigint) => Promise<bigint>
  /** the server sends periodic progress notifications (RunOptionalTestProgressNotify) */
  readonly progressNotify: boolean
  /** the stores are Cachers over the etcd3 store (their own messages where upstream's differ) */
  readonly cacher?: boolean
}

export interface TestStore {
  readonly store: StorageShape
  readonly pathPrefix: string
}

/** Runs an Effect, failing the test with the error's message. */
export const run = <A>(effect: Effect.Effect<A, StatusError>): Promise<A> => Effect.runPromise(effect)

/** The error an Effect fails with (the test fails if it succeeds). */
export const fails = async <A>(effect: Effect.Effect<A, StatusError>): Promise<StatusError> => {
  const exit = await Effect.runPromiseExit(effect)
  if (Exit.isSuccess(exit)) throw new Error(`expected a failure, got ${JSON.stringify(exit.value)}`)
  const e = exit.cause._tag === "Fail" ? exit.cause.error : undefined
  if (e === undefined) throw new Error(`expected a typed failure, got ${String(exit.cause)}`)
  return e
}

export const pod = (
  namespace: string,
  name: string,
  extra: { labels?: Record<string, string>; nodeName?: string } = {}
): KubeObject => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name, namespace, ...(extra.labels === undefined ? {} : { labels: extra.labels }) },
  spec: { nodeName: extra.nodeName ?? "" }
})

export const rv = (o: { metadata: { resourceVersion?: string | undefined } }): bigint =>
  BigInt(o.metadata.resourceVersion ?? "0")

/** pods select on metadata.name, metadata.namespace and spec.nodeName */
export const podAttrs = (obj: KubeObject) => ({
  labels: obj.metadata.labels ?? {},
  fields: {
    "metadata.name": obj.metadata.name ?? "",
    "metadata.namespace": obj.metadata.namespace ?? "",
    "spec.nodeName": (obj["spec"] as { nodeName?: string } | undefined)?.nodeName ?? ""
  }
})

export const predicate = (
  q: { label?: string; field?: string; limit?: number; continue?: string; bookmarks?: boolean } = {}
): SelectionPredicate => {
  const p = parsePredicate({
    labelSelector: q.label,
    fieldSelector: q.field,
    limit: q.limit,
    continue: q.continue,
    allowWatchBookmarks: q.bookmarks,
    getAttrs: podAttrs
  })
  if (p._tag === "Left") throw new Error(p.left.message)
  return p.right
}

export { Everything }

/**
 * A watch being read in the background: `next(n)` waits for n more events, `none(ms)` checks that
 * nothing arrives for a while, `stop()` interrupts it (watch.Interface.Stop).
 */
export class Watching {
  private readonly events: Array<WatchEvent> = []
  private taken = 0
  private done = false
  private waiters: Array<() => void> = []
  private readonly fiber: Fiber.RuntimeFiber<void, never>

  constructor(stream: Stream.Stream<WatchEvent>) {
    this.fiber = Effect.runFork(
      Stream.runForEach(stream, (e) =>
        Effect.sync(() => {
          this.events.push(e)
          this.wake()
        })
      ).pipe(
        Effect.ensuring(
          Effect.sync(() => {
            this.done = true
            this.wake()
          })
        )
      )
    )
  }

  private wake() {
    const w = this.waiters
    this.waiters = []
    for (const f of w) f()
  }

  static async start(
    store: StorageShape,
    key: string,
    options: Parameters<StorageShape["watch"]>[1]
  ): Promise<Watching> {
    return new Watching(await run(store.watch(key, options)))
  }

  /** the next n events, waiting up to `timeoutMs` (30 s: wait.ForeverTestTimeout) */
  async next(n = 1, timeoutMs = 30_000): Promise<Array<WatchEvent>> {
    const deadline = Date.now() + timeoutMs
    while (this.events.length - this.taken < n) {
      if (this.done)
        throw new Error(
          `watch ended after ${this.events.length} events, wanted ${n} more than ${this.taken}: ${JSON.stringify(this.events)}`
        )
      const left = deadline - Date.now()
      if (left <= 0)
        throw new Error(`timed out waiting for ${n} events; have ${JSON.stringify(this.events.slice(this.taken))}`)
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left)
        this.waiters.push(() => {
          clearTimeout(t)
          resolve()
        })
      })
    }
    const out = this.events.slice(this.taken, this.taken + n)
    this.taken += n
    return out
  }

  /** testCheckNoMoreResults: nothing more within `ms` */
  async none(ms = 100): Promise<void> {
    await new Promise((r) => setTimeout(r, ms))
    expect(this.events.slice(this.taken)).toEqual([])
  }

  /** waits for the stream to end (testCheckStop) and returns what was not taken */
  async ended(timeoutMs = 30_000): Promise<Array<WatchEvent>> {
    const deadline = Date.now() + timeoutMs
    while (!this.done) {
      if (Date.now() > deadline) throw new Error("the watch did not end")
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, 50)
        this.waiters.push(() => {
          clearTimeout(t)
          resolve()
        })
      })
    }
    return this.events.slice(this.taken)
  }

  get isDone(): boolean {
    return this.done
  }

  async stop(): Promise<void> {
    await Effect.runPromise(Fiber.interrupt(this.fiber))
  }
}

/** A scope-owned client for a backend's lifetime (closed by `close`). */
export const clientFor = async (endpoints: ReadonlyArray<string>) => {
  const scope = Effect.runSync(Scope.make())
  const client = await Effect.runPromise(Scope.extend(makeClient({ endpoints, dialTimeout: "10 seconds" }), scope))
  return { client, close: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
}

export const collect = (s: Stream.Stream<WatchEvent>, n: number) =>
  Effect.runPromise(Stream.runCollect(Stream.take(s, n))).then(Chunk.toArray)

/** the object of an event without its resourceVersion (for comparing contents) */
export const contents = (o: KubeObject): KubeObject => ({
  ...o,
  metadata: { ...o.metadata, resourceVersion: undefined }
})
