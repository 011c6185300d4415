/**
 * Shared helpers for the watch tests: the real MvccStore over the in-memory backend under a
 * WatchableStore (or the whole stack with a Lessor over any backend), and small drivers for writes
 * and channel draining.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Chunk, Effect, Layer } from "effect"
import { Backend } from "../../src/backend/backend.js"
import { type LmdbStats, makeLmdbBackend } from "../../src/backend/lmdb.js"
import { layerMemory } from "../../src/backend/memory.js"
import { layerWith as lessorLayer, type Lessor, type LessorConfig } from "../../src/lease/lessor.js"
import { MvccStore, type MvccStoreShape } from "../../src/mvcc/kv.js"
import { layerDefault } from "../../src/mvcc/kvstore.js"
import type { RecoveryError } from "../../src/mvcc/recovery-error.js"
import { layerWith, WatchableStore, type WatchableStoreConfig } from "../../src/watch/watchable-store.js"
import type { WatchStream } from "../../src/watch/watch-stream.js"
import type { WatchResponse } from "../../src/watch/watcher.js"

export const b = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, "latin1"))
export const s = (u: Uint8Array): string => Buffer.from(u.buffer, u.byteOffset, u.byteLength).toString("latin1")

/** WatchableStore + MvccStore over a fresh in-memory backend. */
export const watchLayer = (
  config: Partial<WatchableStoreConfig> = {},
  /** decorates the real store the watchable store sees (to inject timing, never to fake it) */
  wrap?: (store: MvccStoreShape) => MvccStoreShape
): Layer.Layer<WatchableStore | MvccStore, RecoveryError> => {
  const real = layerDefault.pipe(Layer.provide(layerMemory))
  const store =
    wrap === undefined ? real : Layer.effect(MvccStore, Effect.map(MvccStore, wrap)).pipe(Layer.provide(real))
  return layerWith(config).pipe(Layer.provideMerge(store))
}

/** WatchableStore + Lessor + MvccStore over the given backend, every service exposed. */
export const watchStack = <E>(
  backend: Layer.Layer<Backend, E>,
  config: Partial<WatchableStoreConfig> = {},
  lessor: Partial<LessorConfig> = {}
): Layer.Layer<WatchableStore | Lessor | MvccStore | Backend, E | RecoveryError> => {
  const store = layerDefault.pipe(Layer.provideMerge(backend))
  return layerWith(config).pipe(Layer.provideMerge(lessorLayer(lessor).pipe(Layer.provideMerge(store))))
}

/**
 * The same stack over LMDB in a fresh temp dir, removed when the layer's scope closes; `onOpen`
 * gets the backend's commit counters.
 */
export const lmdbWatchStack = (
  config: Partial<WatchableStoreConfig> = {},
  lessor: Partial<LessorConfig> = {},
  onOpen: (stats: LmdbStats) => void = () => {}
) =>
  Layer.unwrapScoped(
    Effect.map(
      Effect.acquireRelease(
        Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "watch-lmdb-"))),
        (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
      ),
      (dataDir) =>
        watchStack(
          Layer.scoped(
            Backend,
            Effect.map(makeLmdbBackend({ dataDir }), (m) => {
              onOpen(m.stats)
              return m.backend
            })
          ),
          config,
          lessor
        )
    )
  )

export const put = (key: string, value = "v") =>
  Effect.flatMap(MvccStore, (st) => st.put({ key: b(key), value: b(value) }))

export const del = (key: string, end?: string) =>
  Effect.flatMap(MvccStore, (st) => st.deleteRange({ key: b(key), rangeEnd: end === undefined ? undefined : b(end) }))

/** Takes whatever is buffered without waiting (nothing when empty). */
export const drain = (ws: WatchStream): Effect.Effect<Array<WatchResponse>> =>
  ws.chanLen() > 0 ? Effect.map(ws.takeAll, ([c]) => Chunk.toArray(c)) : Effect.succeed([])

/** Lets setImmediate-based yields (the sync loop's I/O turns) run. */
export const settle = (n = 3): Effect.Effect<void> =>
  Effect.promise(async () => {
    for (let i = 0; i < n; i++) await new Promise<void>((r) => setImmediate(r))
  })

export const revs = (rs: ReadonlyArray<WatchResponse>): Array<Array<number>> =>
  rs.map((r) => r.events.map((e) => e.kv.modRevision))
