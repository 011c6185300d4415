/**
 * Lease test helpers: a lessor over the real store over a real backend (memory or LMDB), a
 * recorder of the store's committed revisions, and small byte/string helpers.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Effect, Layer } from "effect"
import type { Backend } from "../../src/backend/backend.js"
import { layerLmdb } from "../../src/backend/lmdb.js"
import { layerMemory } from "../../src/backend/memory.js"
import type { EtcdError } from "../../src/errors.js"
import { type Lessor, type LessorConfig, layerWith } from "../../src/lease/lessor.js"
import type { Event } from "../../src/mvcc/key-value.js"
import { MvccStore } from "../../src/mvcc/kv.js"
import type { RecoveryError } from "../../src/mvcc/recovery-error.js"
import { layer as kvLayer, layerConfig } from "../../src/mvcc/kvstore.js"

export const b = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, "latin1"))
export const str = (u: Uint8Array): string => Buffer.from(u.buffer, u.byteOffset, u.byteLength).toString("latin1")

export type Env = Lessor | MvccStore | Backend

/** Lessor + store + the given backend, all exposed to the test. */
export const lessorOver = <E>(
  backend: Layer.Layer<Backend, E>,
  config: Partial<LessorConfig> = {}
): Layer.Layer<Env, E | RecoveryError> =>
  layerWith(config).pipe(Layer.provideMerge(kvLayer.pipe(Layer.provide(layerConfig()))), Layer.provideMerge(backend))

export const memoryEnv = (config: Partial<LessorConfig> = {}) => lessorOver(layerMemory, config)
export const lmdbEnv = (dataDir: string, config: Partial<LessorConfig> = {}) =>
  lessorOver(layerLmdb({ dataDir }), config)

export interface Commit {
  readonly rev: number
  readonly events: ReadonlyArray<Event>
}

/** Installs a commit listener on the store and returns the growing log of committed revisions. */
export const recordCommits: Effect.Effect<Array<Commit>, never, MvccStore> = Effect.map(MvccStore, (store) => {
  const log: Array<Commit> = []
  store.addCommitListener((rev, events) => {
    log.push({ rev, events: [...events] })
  })
  return log
})

/** Every live key → its lease, read through the store's Range. */
export const liveKeys: Effect.Effect<Map<string, bigint>, EtcdError, MvccStore> = Effect.flatMap(MvccStore, (store) =>
  Effect.map(
    store.range({ key: b("\0"), rangeEnd: b("\0") }),
    (r) => new Map(r.kvs.map((kv) => [str(kv.key), kv.lease]))
  )
)

/** Waits (real time, bounded) until `cond` holds: for work that waits on real disk I/O. */
export const eventually = <E, R>(cond: Effect.Effect<boolean, E, R>, tries = 400): Effect.Effect<void, E | Error, R> =>
  Effect.gen(function* () {
    for (let i = 0; i < tries; i++) {
      if (yield* cond) return
      yield* Effect.promise(() => new Promise<void>((r) => setTimeout(r, 5)))
    }
    return yield* Effect.fail(new Error("condition not reached"))
  })

/** A temp dir removed by the returned cleanup. */
export const tempDir = (prefix = "lease-"): { readonly dir: string; readonly cleanup: () => void } => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix))
  return { dir, cleanup: () => fs.rmSync(dir, { recursive: true, force: true }) }
}
