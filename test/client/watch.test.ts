/**
 * Watch behaviour against a real server: event content and order, options (prevKv, filters, key
 * ranges, createdNotify, progress), multiplexing by metadata, cancellation on the server when a
 * consumer stops, client close, compaction and permission failures.
 *
 * Server-side effects are observed through the server's own counters (etcd:
 * etcd_debugging_mvcc_watcher_total / _watch_stream_total on --listen-metrics-urls).
 */
import { Cause, Chunk, Context, Deferred, Effect, Exit, Fiber, Layer, Option, Scope, Stream } from "effect"
import * as grpc from "@grpc/grpc-js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  EtcdClient,
  type EtcdClientShape,
  EventType,
  Op,
  toText,
  WatchCompacted,
  type WatchError,
  WatchNoLeader,
  WatchPermissionDenied,
  type WatchResponse
} from "../../src/client/index.js"
import { etcdserverpb } from "../../src/proto/index.js"
import { EtcdProcess, skipEtcd } from "../support/etcd.js"
import { serverTargets, type TestServer } from "../support/servers.js"
import { clientLayer, provideClient, scopedClient } from "./helpers.js"

const keyOf = (e: WatchResponse["events"][number]) =>
  `${e.type === EventType.PUT ? "PUT" : "DELETE"} ${toText(e.kv.key)}`
const keys = (r: WatchResponse) => r.events.map(keyOf)

/** Polls `read` until it returns `expected` (or is unobservable: undefined), up to 5 s. */
const eventually = async (read: () => Promise<number | undefined>, expected: number): Promise<void> => {
  const deadline = Date.now() + 5000
  let last: number | undefined
  while (Date.now() < deadline) {
    last = await read()
    if (last === undefined || last === expected) return
    await new Promise((r) => setTimeout(r, 25))
  }
  expect(last).toBe(expected)
}

/** Starts consuming `stream` in the background; `take` resolves with what it got so far once n arrived. */
const collectN = (stream: Stream.Stream<WatchResponse, WatchError>, n: number) =>
  stream.pipe(Stream.take(n), Stream.timeout("5 seconds"), Stream.runCollect, Effect.map(Chunk.toArray))

/**
 * The first `n` events however the server grouped them: a watch from a start revision that
 * registers after the writes gets them replayed together, one registered before one per response.
 */
const collectEvents = (stream: Stream.Stream<WatchResponse, WatchError>, n: number) =>
  stream.pipe(
    Stream.mapConcat((r) => r.events),
    Stream.take(n),
    Stream.timeout("5 seconds"),
    Stream.runCollect,
    Effect.map(Chunk.toArray)
  )

/**
 * collectN in a fiber of its own, returned once the watch's created response arrived (a watch
 * with createdNotify): the server has the watcher, so what is written next reaches it.
 */
const collectOnceCreated = (stream: Stream.Stream<WatchResponse, WatchError>, n: number) =>
  Effect.gen(function* () {
    const created = yield* Deferred.make<void>()
    const fiber = yield* Effect.fork(
      collectN(
        Stream.tap(stream, (r) => (r.created ? Deferred.succeed(created, undefined) : Effect.void)),
        n
      )
    )
    yield* Effect.raceFirst(
      Deferred.await(created),
      Effect.zipRight(Fiber.await(fiber), Effect.dieMessage("the watch ended before it was created"))
    )
    return fiber
  })

describe.each(serverTargets.filter((t) => t.enabled))("watch ($name)", (target) => {
  let server: TestServer

  beforeAll(async () => {
    server = await target.start({ progressNotifyInterval: "300ms" })
  })
  afterAll(async () => {
    await server?.dispose()
  })

  const run = <A, E>(f: (c: EtcdClientShape) => Effect.Effect<A, E, Scope.Scope>) =>
    Effect.runPromise(Effect.scoped(Effect.flatMap(EtcdClient, f)).pipe(provideClient(server.endpoint)))

  it("delivers puts and deletes in order, with previous values", async () => {
    const events = await run((c) =>
      Effect.gen(function* () {
        // from the next revision: however late the watch registers, it replays the writes below
        const from = (yield* c.kv.get("/pv/a")).header.revision + 1n
        const fiber = yield* Effect.fork(collectEvents(c.watch("/pv/a", { prevKv: true, startRevision: from }), 3))
        yield* c.kv.put("/pv/a", "1")
        yield* c.kv.put("/pv/a", "2")
        yield* c.kv.delete("/pv/a")
        return yield* Fiber.join(fiber)
      })
    )
    expect(events.map(keyOf)).toEqual(["PUT /pv/a", "PUT /pv/a", "DELETE /pv/a"])
    const [create, modify, del] = events
    expect(create!.prevKv).toBeUndefined() // a create has no previous value
    expect(toText(create!.kv.value)).toBe("1")
    expect(create!.kv.version).toBe(1n)
    expect(toText(modify!.prevKv!.value)).toBe("1")
    expect(modify!.kv.version).toBe(2n)
    expect(modify!.kv.createRevision).toBe(create!.kv.modRevision)
    expect(toText(del!.prevKv!.value)).toBe("2")
    expect(del!.kv.modRevision).toBe(modify!.kv.modRevision + 1n)
    expect(del!.kv.value.length).toBe(0)
  })

  it("filters PUT or DELETE events", async () => {
    const [noPut, noDelete] = await run((c) =>
      Effect.gen(function* () {
        const from = (yield* c.kv.get("/flt/")).header.revision + 1n
        const a = yield* Effect.fork(
          collectEvents(c.watch("/flt/", { prefix: true, noPut: true, startRevision: from }), 1)
        )
        const b = yield* Effect.fork(
          collectEvents(c.watch("/flt/", { prefix: true, noDelete: true, startRevision: from }), 2)
        )
        yield* c.kv.put("/flt/x", "1")
        yield* c.kv.put("/flt/y", "1")
        yield* c.kv.delete("/flt/x")
        return [yield* Fiber.join(a), yield* Fiber.join(b)] as const
      })
    )
    expect(noPut.map(keyOf)).toEqual(["DELETE /flt/x"])
    expect(noDelete.map(keyOf)).toEqual(["PUT /flt/x", "PUT /flt/y"])
  })

  it("selects keys by range, from-key and prefix as etcd does", async () => {
    const [range, fromKey, prefix] = await run((c) =>
      Effect.gen(function* () {
        // from the next revision: however late a watch registers, it replays the puts below
        const from = (yield* c.kv.put("/ra", "outside every watched range")).header.revision + 1n
        const a = yield* Effect.fork(collectEvents(c.watch("/rg/b", { rangeEnd: "/rg/d", startRevision: from }), 2))
        const b = yield* Effect.fork(collectEvents(c.watch("/rg/c", { fromKey: true, startRevision: from }), 3))
        const p = yield* Effect.fork(collectEvents(c.watch("/rg/", { prefix: true, startRevision: from }), 4))
        for (const k of ["/rg/a", "/rg/b", "/rg/c", "/rg/d", "/rh"]) yield* c.kv.put(k, "v")
        return [yield* Fiber.join(a), yield* Fiber.join(b), yield* Fiber.join(p)] as const
      })
    )
    expect(range.map(keyOf)).toEqual(["PUT /rg/b", "PUT /rg/c"])
    expect(fromKey.map(keyOf)).toEqual(["PUT /rg/c", "PUT /rg/d", "PUT /rh"])
    expect(prefix.map(keyOf)).toEqual(["PUT /rg/a", "PUT /rg/b", "PUT /rg/c", "PUT /rg/d"])
  })

  it("replays history from a start revision, whole revisions per response", async () => {
    const { responses, txnRev } = await run((c) =>
      Effect.gen(function* () {
        const first = yield* c.kv.put("/hist/a", "1")
        const txn = yield* c.kv.txn().success(Op.put("/hist/b", "2"), Op.put("/hist/c", "2")).commit
        const responses = yield* c.watch("/hist/", { prefix: true, startRevision: first.header.revision }).pipe(
          Stream.takeUntil((r) => r.events.some((e) => e.kv.modRevision === txn.header.revision)),
          Stream.timeout("5 seconds"),
          Stream.runCollect,
          Effect.map(Chunk.toArray)
        )
        return { responses, txnRev: txn.header.revision }
      })
    )
    expect(responses.flatMap(keys)).toEqual(["PUT /hist/a", "PUT /hist/b", "PUT /hist/c"])
    // The txn's two events come in one response: a revision is never split.
    const withTxn = responses.filter((r) => r.events.some((e) => e.kv.modRevision === txnRev))
    expect(withTxn).toHaveLength(1)
    expect(withTxn[0]!.events.filter((e) => e.kv.modRevision === txnRev)).toHaveLength(2)
  })

  it("reports creation first with createdNotify, at the revision the watch starts after", async () => {
    const [responses, put] = await run((c) =>
      Effect.gen(function* () {
        const before = yield* c.kv.put("/cn/x", "0")
        const fiber = yield* collectOnceCreated(c.watch("/cn/x", { createdNotify: true }), 2)
        const put = yield* c.kv.put("/cn/x", "1")
        return [yield* Fiber.join(fiber), { before, put }] as const
      })
    )
    expect(responses[0]!.created).toBe(true)
    expect(responses[0]!.events).toEqual([])
    expect(responses[0]!.header.revision).toBeGreaterThanOrEqual(put.before.header.revision)
    expect(responses[1]!.events[0]!.kv.modRevision).toBe(put.put.header.revision)
  })

  it("multiplexes watches with equal metadata onto one gRPC stream", async () => {
    await eventually(() => server.watchStreamCount(), 0)
    await run((c) =>
      Effect.gen(function* () {
        const consume = (s: Stream.Stream<WatchResponse, WatchError>) => Effect.forkScoped(Stream.runDrain(s))
        yield* consume(c.watch("/mx/a"))
        yield* consume(c.watch("/mx/b", { prefix: true }))
        yield* consume(c.watch("/mx/c", { prevKv: true }))
        yield* Effect.promise(() => eventually(() => server.watcherCount(), 3))
        yield* Effect.promise(() => eventually(() => server.watchStreamCount(), 1))
        // Different metadata, different stream (clientv3 groups streams by metadata).
        yield* consume(c.watch("/mx/d", { requireLeader: true }))
        yield* consume(c.watch("/mx/e", { metadata: { "x-tenant": "t1" } }))
        yield* Effect.promise(() => eventually(() => server.watchStreamCount(), 3))
        yield* Effect.promise(() => eventually(() => server.watcherCount(), 5))
      })
    )
    await eventually(() => server.watcherCount(), 0)
    await eventually(() => server.watchStreamCount(), 0)
  })

  it("cancels a watch on the server when its consumer stops; the stream stays for the others", async () => {
    await run((c) =>
      Effect.gen(function* () {
        const other = yield* Effect.fork(collectN(c.watch("/cc/other"), 1))
        yield* Effect.promise(() => eventually(() => server.watcherCount(), 1))
        // A consumer that takes one response and stops.
        const one = yield* Effect.fork(collectN(c.watch("/cc/one"), 1))
        yield* Effect.promise(() => eventually(() => server.watcherCount(), 2))
        yield* c.kv.put("/cc/one", "1")
        expect((yield* Fiber.join(one)).flatMap(keys)).toEqual(["PUT /cc/one"])
        yield* Effect.promise(() => eventually(() => server.watcherCount(), 1))
        yield* Effect.promise(() => eventually(() => server.watchStreamCount(), 1))
        // A watch interrupted right after it registered (its create possibly still in flight).
        for (let i = 0; i < 5; i++) {
          const f = yield* Effect.fork(Stream.runDrain(c.watch(`/cc/brief${i}`)))
          yield* Effect.yieldNow()
          yield* Fiber.interrupt(f)
        }
        yield* Effect.promise(() => eventually(() => server.watcherCount(), 1))
        yield* c.kv.put("/cc/other", "1")
        expect((yield* Fiber.join(other)).flatMap(keys)).toEqual(["PUT /cc/other"])
      })
    )
    await eventually(() => server.watcherCount(), 0)
  })

  it("ends every watch stream when the client closes", async () => {
    const scope = await Effect.runPromise(Scope.make())
    const client = await Effect.runPromise(Layer.buildWithScope(clientLayer(server.endpoint), scope))
    const c = Context.get(client, EtcdClient)
    const fibers = [
      c.watch("/close/a"),
      c.watch("/close/b", { prefix: true }),
      c.watch("/close/c", { requireLeader: true })
    ].map((s) => Effect.runFork(Stream.runCollect(s)))
    await eventually(() => server.watcherCount(), 3)
    await Effect.runPromise(Scope.close(scope, Exit.void))
    for (const f of fibers) {
      const exit = await Effect.runPromise(Fiber.await(f))
      expect(Exit.isSuccess(exit)).toBe(true) // ended, not failed, not hanging
    }
    await eventually(() => server.watcherCount(), 0)
    // A watch on a closed client ends at once.
    const late = await Effect.runPromise(Stream.runCollect(c.watch("/close/late")).pipe(Effect.timeout("2 seconds")))
    expect(Chunk.size(late)).toBe(0)
  })

  it("fails a watch behind the compaction with WatchCompacted and the compact revision", async () => {
    const result = await run((c) =>
      Effect.gen(function* () {
        const first = yield* c.kv.put("/cp/a", "1")
        let last = first
        for (let i = 0; i < 5; i++) last = yield* c.kv.put("/cp/a", `${i}`)
        yield* c.kv.compact(last.header.revision)
        const keep = yield* Effect.fork(Stream.runDrain(c.watch("/cp/keep")))
        const exit = yield* Stream.runCollect(
          c.watch("/cp/", { prefix: true, startRevision: first.header.revision })
        ).pipe(Effect.exit)
        // The client cancels the compacted watcher on the server (etcd keeps it until told).
        yield* Effect.promise(() => eventually(() => server.watcherCount(), 1))
        yield* Fiber.interrupt(keep)
        return { exit, compactedAt: last.header.revision }
      })
    )
    expect(Exit.isFailure(result.exit)).toBe(true)
    const error = Option.getOrThrow(Cause.failureOption((result.exit as Exit.Failure<unknown, WatchError>).cause))
    expect(error).toBeInstanceOf(WatchCompacted)
    expect((error as WatchCompacted).compactRevision).toBe(result.compactedAt)
    expect(error.message).toBe("etcdserver: mvcc: required revision has been compacted")
  })

  it("requestProgress reaches every watch on the stream", async () => {
    const [a, b, rev] = await run((c) =>
      Effect.gen(function* () {
        const a = yield* collectOnceCreated(c.watch("/rp/a", { createdNotify: true }), 2)
        const b = yield* collectOnceCreated(c.watch("/rp/b", { createdNotify: true }), 2)
        const rev = (yield* c.kv.put("/rp/other", "x")).header.revision
        yield* c.requestProgress()
        return [yield* Fiber.join(a), yield* Fiber.join(b), rev] as const
      })
    )
    for (const responses of [a, b]) {
      expect(responses[0]!.created).toBe(true)
      expect(responses[1]!.progressNotify).toBe(true)
      expect(responses[1]!.events).toEqual([])
      expect(responses[1]!.header.revision).toBe(rev)
    }
  })

  it("delivers periodic progress notifications to a progressNotify watch", async () => {
    const responses = await run((c) => collectN(c.watch("/pn/", { prefix: true, progressNotify: true }), 2))
    expect(responses.every((r) => r.progressNotify && r.events.length === 0)).toBe(true)
    expect(responses[1]!.header.revision).toBeGreaterThanOrEqual(responses[0]!.header.revision)
  })
})

describe.skipIf(skipEtcd)("watch permissions (etcd 3.4 with auth)", () => {
  let etcd: EtcdProcess
  let token: string

  beforeAll(async () => {
    etcd = await EtcdProcess.start()
    for (const args of [
      ["user", "add", "root:rootpw"],
      ["role", "add", "reader"],
      ["role", "grant-permission", "reader", "read", "/allowed/", "--prefix=true"],
      ["user", "add", "alice:alicepw"],
      ["user", "grant-role", "alice", "reader"],
      ["auth", "enable"]
    ]) {
      const r = await etcd.etcdctl(args)
      expect(r.code, r.stderr).toBe(0)
    }
    const auth = new etcdserverpb.Auth(etcd.endpoint, grpc.credentials.createInsecure()) as unknown as grpc.Client & {
      Authenticate: (req: object, cb: (err: unknown, res: { token: string }) => void) => void
    }
    token = await new Promise<string>((resolve, reject) =>
      auth.Authenticate({ name: "alice", password: "alicepw" }, (err: unknown, res: { token: string }) =>
        err ? reject(err) : resolve(res.token)
      )
    )
    auth.close()
  })
  afterAll(async () => {
    await etcd?.dispose()
  })

  it("fails a watch on a forbidden range with WatchPermissionDenied; allowed ranges work", async () => {
    const result = await Effect.runPromise(
      Effect.gen(function* () {
        const c = yield* scopedClient(etcd.endpoint, { metadata: { token } })
        const denied = yield* Stream.runCollect(c.watch("/secret/", { prefix: true })).pipe(Effect.flip)
        const allowed = yield* c
          .watch("/allowed/", { prefix: true, createdNotify: true })
          .pipe(Stream.take(1), Stream.runCollect)
        return { denied, allowed: Chunk.toArray(allowed) }
      }).pipe(Effect.scoped)
    )
    expect(result.denied).toBeInstanceOf(WatchPermissionDenied)
    expect(result.denied.message).toBe("rpc error: code = PermissionDenied desc = etcdserver: permission denied")
    expect(result.allowed[0]!.created).toBe(true)
  })
})

describe.skipIf(skipEtcd)("watch without a leader (etcd 3.4, two members)", () => {
  let members: Array<EtcdProcess>

  beforeAll(async () => {
    members = await EtcdProcess.cluster(2)
  }, 30_000)
  afterAll(async () => {
    await Promise.all((members ?? []).map((m) => m.dispose()))
  })

  it("fails a require-leader watch with WatchNoLeader when quorum is lost; other watches go on", async () => {
    const result = await Effect.runPromise(
      Effect.gen(function* () {
        const c = yield* scopedClient(members[0]!.endpoint)
        const created = (s: Stream.Stream<WatchResponse, WatchError>) =>
          Effect.gen(function* () {
            const latch = yield* Effect.makeLatch(false)
            const fiber = yield* s.pipe(
              Stream.tap((r) => (r.created ? latch.open : Effect.void)),
              Stream.runDrain,
              Effect.fork
            )
            yield* latch.await
            return fiber
          })
        const leader = yield* created(c.watch("/nl/", { prefix: true, requireLeader: true, createdNotify: true }))
        const plain = yield* created(c.watch("/nl/", { prefix: true, createdNotify: true }))
        yield* Effect.promise(() => members[1]!.stop())
        const exit = yield* Fiber.await(leader).pipe(Effect.timeout("10 seconds"))
        const plainStillRunning = (yield* Fiber.poll(plain))._tag === "None"
        return { exit, plainStillRunning }
      }).pipe(Effect.scoped)
    )
    expect(Exit.isFailure(result.exit)).toBe(true)
    const error = Option.getOrThrow(Cause.failureOption((result.exit as Exit.Failure<unknown, WatchError>).cause))
    expect(error).toBeInstanceOf(WatchNoLeader)
    expect(error.message).toBe("etcdserver: no leader")
    expect(result.plainStillRunning).toBe(true)
  }, 30_000)
})
