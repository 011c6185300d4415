/**
 * The store's write fast path (`putNow`/`deleteRangeNow`/`txnNow`, mvcc/pending-write.ts): staged
 * at once, answered from the backend's durability callback in revision order after the commit
 * listeners ran; a backend failure stops the store with etcd's "server stopped"; a throwing
 * listener is a defect. The property test stages random writes concurrently over a gated backend
 * (durability released in random steps) and compares answers, their order and the events with the
 * reference model.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, FastCheck as fc, Layer, Option } from "effect"
import { Errors, type EtcdError } from "../../src/errors.js"
import { layerConfig, layer as storeLayer } from "../../src/mvcc/kvstore.js"
import { PendingWrite, type WriteResult } from "../../src/mvcc/pending-write.js"
import { checkHistory, close, deleteArb, nkv, nTxn, open, putArb, toPut, toTxn, txnArb, u } from "./driver.js"
import { gateLayer, makeGate } from "./gated-backend.js"
import { b, memoryStore } from "./helpers.js"
import { Model, type MDelete, type MPut, type MTxn } from "./model.js"

const gatedStore = () => {
  const gate = makeGate()
  return { gate, layer: storeLayer.pipe(Layer.provide(layerConfig()), Layer.provide(gateLayer(gate))) }
}

/** The outcome of a fast-path result once known (undefined: still pending). */
const outcome = <A>(r: WriteResult<A, EtcdError>): Exit.Exit<A, EtcdError> | undefined =>
  r instanceof PendingWrite ? r.poll() : r

describe("MvccStore write fast path", () => {
  it.effect("with a backend durable at once, a put is answered with a plain Exit", () =>
    Effect.gen(function* () {
      const h = yield* open(memoryStore())
      const r = h.store.putNow({ key: b("k"), value: b("v") })
      expect(Exit.isExit(r)).toBe(true)
      expect(
        Exit.isSuccess(r as Exit.Exit<unknown>) &&
          (r as Exit.Success<{ header: { revision: number } }, never>).value.header.revision
      ).toBe(2)
      expect(h.store.rev()).toBe(2)
      expect(h.events.get(2)?.map((e) => e.kv.value)).toEqual(["v"])
      yield* close(h)
    })
  )

  it.effect("a pending put is answered only after durability, after the watchers saw its revision", () =>
    Effect.gen(function* () {
      const { gate, layer } = gatedStore()
      const h = yield* open(layer)
      const seenAtAnswer: Array<number> = []
      const r = h.store.putNow({ key: b("k"), value: b("v") })
      expect(r).toBeInstanceOf(PendingWrite)
      const pending = r as PendingWrite<{ header: { revision: number } }, EtcdError>
      pending.onDone(() => seenAtAnswer.push(h.store.rev(), h.events.size))
      expect(pending.poll()).toBeUndefined()
      // staged: visible to the next write's evaluation, not committed
      expect(h.store.rev()).toBe(1)
      expect(gate.pending()).toBe(1)
      yield* gate.release()
      const exit = pending.poll()!
      expect(Exit.isSuccess(exit) && exit.value.header.revision).toBe(2)
      expect(seenAtAnswer).toEqual([2, 1])
      yield* close(h)
    })
  )

  it.effect("answers and events come in revision order, whatever order the callers registered in", () =>
    Effect.gen(function* () {
      const { gate, layer } = gatedStore()
      const h = yield* open(layer)
      const order: Array<string> = []
      h.store.addCommitListener((rev) => order.push(`event ${rev}`))
      const rs = [
        h.store.putNow({ key: b("a"), value: b("1") }),
        h.store.txnNow({
          compare: [],
          success: [{ _tag: "Put", request: { key: b("b"), value: b("2") } }],
          failure: []
        }),
        h.store.deleteRangeNow({ key: b("a") })
      ]
      // register in reverse: the answers still follow the revisions
      for (let i = rs.length - 1; i >= 0; i--)
        (rs[i] as PendingWrite<unknown, EtcdError>).onDone(() => order.push(`answer ${i + 2}`))
      yield* gate.release(1)
      expect(order).toEqual(["event 2", "answer 2"])
      yield* gate.release()
      expect(order).toEqual(["event 2", "answer 2", "event 3", "answer 3", "event 4", "answer 4"])
      yield* close(h)
    })
  )

  it.effect("a backend failure fails the pending writes and every later one with 'etcdserver: server stopped'", () =>
    Effect.gen(function* () {
      const { gate, layer } = gatedStore()
      const h = yield* open(layer)
      const r = h.store.putNow({ key: b("k"), value: b("v") }) as PendingWrite<unknown, EtcdError>
      yield* gate.fail()
      const failed = (x: Exit.Exit<unknown, EtcdError> | undefined) =>
        x !== undefined && Exit.isFailure(x) ? Option.getOrUndefined(Cause.failureOption(x.cause)) : undefined
      const stopped = Errors.stopped()
      expect(failed(r.poll())).toMatchObject({ code: stopped.code, message: stopped.message })
      expect(failed(outcome(h.store.putNow({ key: b("k2"), value: b("v") })))).toMatchObject({
        message: stopped.message
      })
      expect(h.store.rev()).toBe(1)
      expect(h.events.size).toBe(0)
      // the Effect path says the same
      const e = yield* Effect.flip(h.store.put({ key: b("k3"), value: b("v") }))
      expect(e.message).toBe(stopped.message)
      yield* close(h)
    })
  )

  it.effect("a commit listener that throws: that write dies (a defect), the store stops", () =>
    Effect.gen(function* () {
      const { gate, layer } = gatedStore()
      const h = yield* open(layer)
      h.store.addCommitListener(() => {
        throw new Error("listener bug")
      })
      const r = h.store.putNow({ key: b("k"), value: b("v") }) as PendingWrite<unknown, EtcdError>
      yield* gate.release()
      const exit = r.poll()!
      expect(Exit.isFailure(exit) && Cause.isDie(exit.cause)).toBe(true)
      const later = outcome(h.store.putNow({ key: b("k"), value: b("w") }))!
      expect(Exit.isFailure(later) && Option.getOrUndefined(Cause.failureOption(later.cause))?.message).toBe(
        Errors.stopped().message
      )
      yield* close(h)
    })
  )

  it.effect("a write that changes nothing waits for the head revision to be durable", () =>
    Effect.gen(function* () {
      const { gate, layer } = gatedStore()
      const h = yield* open(layer)
      h.store.putNow({ key: b("k"), value: b("v") })
      // reads k at head revision 2 (staged): must not be answered before 2 is durable
      const r = h.store.deleteRangeNow({ key: b("zzz") })
      expect(r).toBeInstanceOf(PendingWrite)
      expect((r as PendingWrite<unknown, EtcdError>).poll()).toBeUndefined()
      yield* gate.release()
      const exit = (r as PendingWrite<{ header: { revision: number }; deleted: number }, EtcdError>).poll()!
      expect(Exit.isSuccess(exit) && [exit.value.header.revision, exit.value.deleted]).toEqual([2, 0])
      yield* close(h)
    })
  )
})

// ---------------------------------------------------------------------------------------------
// property: concurrent fast-path writes vs the model

type WCmd =
  | { readonly _tag: "Put"; readonly p: MPut }
  | { readonly _tag: "Delete"; readonly d: MDelete }
  | { readonly _tag: "Txn"; readonly t: MTxn }

/** a txn with a put or delete in either branch (a read-only txn reads the committed state, not the head) */
const writes = (t: MTxn): boolean =>
  [...t.success, ...t.failure].some((op) => op._tag !== "Range" && (op._tag !== "Txn" || writes(op.request)))

const wcmdArb: fc.Arbitrary<WCmd> = fc.oneof(
  { weight: 6, arbitrary: putArb.map((p) => ({ _tag: "Put" as const, p })) },
  { weight: 2, arbitrary: deleteArb.map((d) => ({ _tag: "Delete" as const, d })) },
  {
    weight: 4,
    arbitrary: txnArb(1)
      .filter(writes)
      .map((t) => ({ _tag: "Txn" as const, t }))
  }
)

const normalise = (exit: Exit.Exit<unknown, EtcdError>, tag: WCmd["_tag"]): unknown => {
  if (Exit.isFailure(exit)) {
    const e = Option.getOrUndefined(Cause.failureOption(exit.cause))
    if (e === undefined) throw new Error(`unexpected cause: ${Cause.pretty(exit.cause)}`)
    return { error: e.message, code: e.code }
  }
  const v = exit.value as any
  switch (tag) {
    case "Put":
      return { rev: v.header.revision, prevKv: v.prevKv ? nkv(v.prevKv) : null }
    case "Delete":
      return { rev: v.header.revision, deleted: v.deleted, prevKvs: v.prevKvs.map(nkv) }
    case "Txn":
      return nTxn(v)
  }
}

describe("MvccStore write fast path vs the model", () => {
  it.live.prop(
    "writes staged concurrently, made durable in random steps: same answers, answer order and events as the model",
    [fc.array(fc.tuple(wcmdArb, fc.nat(3)), { minLength: 1, maxLength: 40 })],
    ([steps]) =>
      Effect.gen(function* () {
        const { gate, layer } = gatedStore()
        const h = yield* open(layer)
        const m = new Model()
        const answered: Array<number> = []
        const refused: Array<number> = []
        const problems: Array<string> = []
        const listened: Array<number> = []
        h.store.addCommitListener((rev) => listened.push(rev))
        for (let i = 0; i < steps.length; i++) {
          const [cmd, release] = steps[i]!
          let r: WriteResult<unknown, EtcdError>
          let want: unknown
          switch (cmd._tag) {
            case "Put":
              r = h.store.putNow(toPut(cmd.p))
              want = m.putRequest(cmd.p)
              break
            case "Delete":
              r = h.store.deleteRangeNow({ ...cmd.d, key: b(cmd.d.key), rangeEnd: u(cmd.d.rangeEnd) })
              want = m.deleteRequest(cmd.d)
              break
            case "Txn":
              r = h.store.txnNow(toTxn(cmd.t))
              want = m.txnRequest(cmd.t)
              break
          }
          const check = (exit: Exit.Exit<unknown, EtcdError>) => {
            // a refused request is answered at once; the others in staging order
            if (Exit.isSuccess(exit)) answered.push(i)
            else refused.push(i)
            const got = normalise(exit, cmd._tag)
            if (JSON.stringify(got) !== JSON.stringify(want))
              problems.push(`#${i}: ${JSON.stringify(got)} != ${JSON.stringify(want)}`)
            // answered only once its revision (and every earlier one) is committed and announced
            const rev = (want as { rev?: number }).rev
            if (rev !== undefined && h.store.rev() < rev)
              problems.push(`#${i} answered before revision ${rev} committed`)
          }
          if (r instanceof PendingWrite) r.onDone(check)
          else check(r)
          yield* gate.release(release)
        }
        yield* gate.release()
        expect(problems.join("\n")).toBe("")
        // every write answered, the successful ones in staging order
        expect([...answered, ...refused].sort((x, y) => x - y)).toEqual(steps.map((_, i) => i))
        expect(answered).toEqual([...answered].sort((x, y) => x - y))
        expect(listened).toEqual(Array.from({ length: m.rev - 1 }, (_, i) => i + 2))
        expect(h.store.rev()).toBe(m.rev)
        for (let r = 2; r <= m.rev; r++) expect(h.events.get(r), `events of revision ${r}`).toEqual(m.events[r])
        yield* checkHistory(h, m)
        yield* close(h)
      }),
    { fastCheck: { numRuns: Number(process.env.MVCC_PROP_RUNS ?? 200) } }
  )
})
