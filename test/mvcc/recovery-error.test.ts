/**
 * Start-up corruption is a typed RecoveryError in the error channel of the layer that reads the bad
 * record (the store rebuilding its index, the lessor recovering its leases), and `etcd-effect serve`
 * over such a data dir prints it as one line and exits 1.
 */
import * as fs from "node:fs"
import { Effect, Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Backend, type BackendShape, type WriteOp } from "../../src/backend/backend.js"
import { makeLmdbBackend } from "../../src/backend/lmdb.js"
import { makeMemoryBackend } from "../../src/backend/memory.js"
import { Lessor, layer as lessorLayer } from "../../src/lease/lessor.js"
import { leaseIdToBytes } from "../../src/lease/lease-id.js"
import { encodeLeaseRecord } from "../../src/lease/leasepb.js"
import { revToBytes } from "../../src/mvcc/kv-codec.js"
import { MvccStore } from "../../src/mvcc/kv.js"
import { layerDefault } from "../../src/mvcc/kvstore.js"
import { RecoveryError } from "../../src/mvcc/recovery-error.js"
import { freePort } from "../support/ports.js"
import { ensureBuilt, ServeProcess, tempDir } from "../server/support/process.js"

const GARBAGE = new Uint8Array([0xff, 0xff, 0xff])

/** A memory backend holding `ops`, written before anything reads it. */
const backendWith = async (ops: ReadonlyArray<WriteOp>): Promise<BackendShape> => {
  const { backend } = makeMemoryBackend()
  await Effect.runPromise(backend.write(ops))
  return backend
}

/** Builds the store and the lessor over `backend`; the failure of the build, if any. */
const build = (backend: BackendShape) =>
  Effect.runPromise(
    Effect.flip(
      Effect.scoped(
        Layer.build(lessorLayer.pipe(Layer.provideMerge(layerDefault), Layer.provide(Layer.succeed(Backend, backend))))
      )
    ).pipe(Effect.orElseSucceed(() => "built" as const))
  )

describe("start-up corruption as typed errors", () => {
  it("a key record that does not decode: RecoveryError IndexRebuild from the store's layer", async () => {
    const e = await build(await backendWith([{ bucket: "key", key: revToBytes(2, 0), value: GARBAGE }]))
    expect(e).toBeInstanceOf(RecoveryError)
    expect(e).toMatchObject({ _tag: "RecoveryError", reason: "IndexRebuild" })
    expect((e as RecoveryError).message).toMatch(/^mvcc: cannot rebuild the index from the backend: /)
  })

  it("a lease record that does not decode: RecoveryError LeaseRecovery from the lessor's layer", async () => {
    const e = await build(await backendWith([{ bucket: "lease", key: leaseIdToBytes(7n), value: GARBAGE }]))
    expect(e).toBeInstanceOf(RecoveryError)
    expect(e).toMatchObject({ reason: "LeaseRecovery" })
    expect((e as RecoveryError).message).toMatch(/^lease bucket: record 0000000000000007 is unreadable: /)
  })

  it("a lease record filed under another id: RecoveryError LeaseRecovery", async () => {
    const record = encodeLeaseRecord({ id: 8n, ttl: 10, remainingTTL: 0 })
    const e = await build(await backendWith([{ bucket: "lease", key: leaseIdToBytes(7n), value: record }]))
    expect(e).toEqual(
      new RecoveryError({ reason: "LeaseRecovery", message: "lease bucket: record 0000000000000007 holds lease id 8" })
    )
  })

  it("sound records build both layers", async () => {
    const record = encodeLeaseRecord({ id: 7n, ttl: 10, remainingTTL: 0 })
    expect(await build(await backendWith([{ bucket: "lease", key: leaseIdToBytes(7n), value: record }]))).toBe("built")
  })

  it("the services' types carry the error (not a defect behind never)", () => {
    const store: Layer.Layer<MvccStore, RecoveryError, Backend> = layerDefault
    const lessor: Layer.Layer<Lessor, RecoveryError, MvccStore | Backend> = lessorLayer
    expect([store, lessor].every(Layer.isLayer)).toBe(true)
  })
})

describe("etcd-effect serve over a corrupt data dir (process)", () => {
  const dirs: Array<string> = []
  const procs: Array<ServeProcess> = []
  beforeAll(async () => {
    await ensureBuilt()
  }, 300_000)
  afterAll(async () => {
    await Promise.all(procs.map((p) => p.kill("SIGKILL")))
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true })
  })

  const serveOver = async (ops: ReadonlyArray<WriteOp>) => {
    const dataDir = tempDir()
    dirs.push(dataDir)
    await Effect.runPromise(Effect.scoped(Effect.flatMap(makeLmdbBackend({ dataDir }), (m) => m.backend.write(ops))))
    const p = ServeProcess.spawn({ dataDir }, await freePort())
    procs.push(p)
    const code = await p.exited
    return { code, lines: p.stderr.trim().split("\n") }
  }

  it("an unreadable lease record: one line, exit 1", async () => {
    const { code, lines } = await serveOver([{ bucket: "lease", key: leaseIdToBytes(7n), value: GARBAGE }])
    expect(code).toBe(1)
    expect(lines.length).toBe(1)
    expect(lines[0]).toMatch(/^etcd-effect: lease bucket: record 0000000000000007 is unreadable: /)
  }, 60_000)

  it("an unreadable key record: one line, exit 1", async () => {
    const { code, lines } = await serveOver([{ bucket: "key", key: revToBytes(2, 0), value: GARBAGE }])
    expect(code).toBe(1)
    expect(lines.length).toBe(1)
    expect(lines[0]).toMatch(/^etcd-effect: mvcc: cannot rebuild the index from the backend: /)
  }, 60_000)
})
