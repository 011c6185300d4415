/**
 * A backend failure no write waits on — an LMDB commit failing in the background (a full disk, a
 * broken environment) after the WAL acknowledged its batches — stops the member at once, as etcd's
 * failed commit is fatal: the store hears it through `Backend.onFailure` and reports it to `Fatal`
 * (serve prints that line and exits 1). Before, the member went on until the next write.
 */
import { describe, expect, it } from "@effect/vitest"
import { Context, Deferred, Effect, Layer } from "effect"
import { afterAll } from "vitest"
import { Backend, type BackendError } from "../../src/backend/backend.js"
import { makeLmdbBackend } from "../../src/backend/lmdb.js"
import { Fatal, type LoopDied } from "../../src/supervision/fatal.js"
import { MvccStore } from "../../src/mvcc/kv.js"
import { layerDefault } from "../../src/mvcc/kvstore.js"
import { makeTempDir, removeDir } from "../backend/harness.js"

const root = makeTempDir("backend-failure")
afterAll(() => removeDir(root))

describe("a backend failure in the background", () => {
  it.live("an LMDB commit that fails with no write waiting stops the store and tells Fatal", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { backend, env } = yield* makeLmdbBackend({ dataDir: `${root}/d`, commitIntervalMs: 1 })
        const died = yield* Deferred.make<LoopDied>()
        const store = yield* Effect.provideService(
          Layer.build(layerDefault.pipe(Layer.provide(Layer.succeed(Backend, backend)))),
          Fatal,
          { loopDied: (e) => Deferred.succeed(died, e) }
        ).pipe(Effect.map((ctx) => Context.get(ctx, MvccStore)))
        yield* store.put({ key: Buffer.from("a"), value: Buffer.from("1") })
        // in LMDB: nothing is left for a commit but what comes next
        yield* backend.defragment
        // the environment breaks under the backend: the next LMDB commit (within 1 ms) fails
        yield* Effect.promise(() => env.close())
        // acknowledged by the WAL; its LMDB commit then fails with nobody waiting
        yield* store.put({ key: Buffer.from("b"), value: Buffer.from("2") })
        const e = yield* Deferred.await(died)
        expect(e.loop).toBe("backend")
        expect(e.message).toMatch(/^backend: commit failed: /)
        // stopped: the next write is refused
        const refused = yield* Effect.flip(store.put({ key: Buffer.from("c"), value: Buffer.from("3") }))
        expect(refused.message).toBe("etcdserver: server stopped")
        // a listener that comes late hears it at once
        const late = yield* Deferred.make<BackendError>()
        backend.onFailure!((error) => Deferred.unsafeDone(late, Effect.succeed(error)))
        expect((yield* Deferred.await(late)).message).toBe(e.message)
      })
    )
  )
})
