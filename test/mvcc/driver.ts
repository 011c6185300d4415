/**
 * Drives an MvccStore and the reference Model with the same random command sequence and compares
 * every response, the commit listener's events, the lessor's attachments, and (on demand) the whole
 * readable history. Used by the property tests over both backends.
 */
import { Context, Effect, Exit, FastCheck as fc, Layer, Scope } from "effect"
import { expect } from "vitest"
import { EtcdError } from "../../src/errors.js"
import type { Event, KeyValue } from "../../src/mvcc/key-value.js"
import {
  type Compare,
  type LeaseAttachments,
  MvccStore,
  type MvccStoreShape,
  type RequestOp,
  type ResponseOp,
  type TxnRequest,
  type TxnResponse
} from "../../src/mvcc/kv.js"
import type { MCompare, MDelete, MEvent, MKV, Model, MOp, MPut, MRange, MTxn, NError, NOp, NTxn } from "./model.js"
import { b, s } from "./helpers.js"

// ---------------------------------------------------------------------------------------------
// commands

/** A revision chosen relative to the model's state when the command runs. */
export type RevSel =
  | { readonly k: "zero" }
  | { readonly k: "back"; readonly n: number }
  | { readonly k: "ahead"; readonly n: number }
  | { readonly k: "compacted" }
  | { readonly k: "neg" }

export type Cmd =
  | { readonly _tag: "Range"; readonly r: MRange; readonly rev: RevSel; readonly filters: ReadonlyArray<RevSel | null> }
  | { readonly _tag: "Put"; readonly p: MPut }
  | { readonly _tag: "Delete"; readonly d: MDelete }
  | { readonly _tag: "Txn"; readonly t: MTxn }
  | { readonly _tag: "Compact"; readonly rev: RevSel; readonly physical: boolean }
  | { readonly _tag: "Reopen" }

export const KEYS = ["a", "ab", "b", "c", "d", "\u00ff"] as const

const key = fc.constantFrom(...KEYS)
const keyOrEmpty = fc.oneof({ weight: 30, arbitrary: key }, { weight: 1, arbitrary: fc.constant("") })
const rangeEnd = fc.oneof(
  { weight: 6, arbitrary: fc.constant(undefined) },
  { weight: 2, arbitrary: fc.constant("\0") },
  { weight: 3, arbitrary: key },
  { weight: 1, arbitrary: fc.constant("") }
)
const value = fc.constantFrom("", "x", "y", "zz")
const lease = fc.constantFrom(0n, 0n, 0n, 0n, 1n, 2n, 3n)
const revSel: fc.Arbitrary<RevSel> = fc.oneof(
  { weight: 8, arbitrary: fc.constant({ k: "zero" as const }) },
  { weight: 4, arbitrary: fc.record({ k: fc.constant("back" as const), n: fc.nat(6) }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant("ahead" as const), n: fc.integer({ min: 1, max: 2 }) }) },
  { weight: 1, arbitrary: fc.constant({ k: "compacted" as const }) },
  { weight: 1, arbitrary: fc.constant({ k: "neg" as const }) }
)

const rangeArb = fc.record({
  key: keyOrEmpty,
  rangeEnd,
  limit: fc.oneof({ weight: 4, arbitrary: fc.constant(0) }, { weight: 3, arbitrary: fc.integer({ min: -1, max: 3 }) }),
  sortOrder: fc.oneof(
    { weight: 20, arbitrary: fc.integer({ min: 0, max: 2 }) },
    { weight: 1, arbitrary: fc.constant(3) }
  ),
  sortTarget: fc.oneof(
    { weight: 20, arbitrary: fc.integer({ min: 0, max: 4 }) },
    { weight: 1, arbitrary: fc.constant(7) }
  ),
  keysOnly: fc.boolean(),
  countOnly: fc.oneof({ weight: 5, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) })
})
const filtersArb = fc.array(fc.option(revSel, { freq: 4, nil: null }), { minLength: 4, maxLength: 4 })

export const putArb: fc.Arbitrary<MPut> = fc
  .record({
    key: keyOrEmpty,
    value,
    lease,
    prevKv: fc.boolean(),
    ignoreValue: fc.oneof({ weight: 8, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
    ignoreLease: fc.oneof({ weight: 8, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) })
  })
  .map((p) => ({
    ...p,
    // with ignore_* usually leave the ignored field empty, sometimes not (an error)
    value: p.ignoreValue && p.value !== "zz" ? "" : p.value,
    lease: p.ignoreLease && p.lease !== 3n ? 0n : p.lease
  }))

export const deleteArb: fc.Arbitrary<MDelete> = fc.record({ key: keyOrEmpty, rangeEnd, prevKv: fc.boolean() })

const compareArb: fc.Arbitrary<MCompare> = fc.record({
  key: keyOrEmpty,
  rangeEnd: fc.oneof({ weight: 4, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: rangeEnd }),
  target: fc.integer({ min: 0, max: 4 }),
  result: fc.integer({ min: 0, max: 3 }),
  num: fc.integer({ min: 0, max: 12 }),
  value,
  lease: fc.constantFrom(0n, 1n, 2n)
})

export const txnArb = (depth: number): fc.Arbitrary<MTxn> => {
  const ops: Array<fc.WeightedArbitrary<MOp>> = [
    { weight: 2, arbitrary: rangeArb.map((r) => ({ _tag: "Range" as const, request: { ...r, key: r.key || "a" } })) },
    { weight: 4, arbitrary: putArb.map((p) => ({ _tag: "Put" as const, request: p })) },
    { weight: 2, arbitrary: deleteArb.map((d) => ({ _tag: "DeleteRange" as const, request: d })) }
  ]
  if (depth > 0) {
    ops.push({ weight: 1, arbitrary: txnArb(depth - 1).map((t) => ({ _tag: "Txn" as const, request: t })) })
  }
  const op = fc.oneof(...ops)
  return fc.record({
    compare: fc.array(compareArb, { maxLength: 2 }),
    success: fc.array(op, { maxLength: 3 }),
    failure: fc.array(op, { maxLength: 3 })
  })
}

export const cmdArb = (withReopen: boolean): fc.Arbitrary<Cmd> =>
  fc.oneof(
    { weight: 8, arbitrary: putArb.map((p) => ({ _tag: "Put" as const, p })) },
    { weight: 3, arbitrary: deleteArb.map((d) => ({ _tag: "Delete" as const, d })) },
    {
      weight: 5,
      arbitrary: fc
        .tuple(rangeArb, revSel, filtersArb)
        .map(([r, rev, filters]) => ({ _tag: "Range" as const, r, rev, filters }))
    },
    { weight: 6, arbitrary: txnArb(2).map((t) => ({ _tag: "Txn" as const, t })) },
    {
      weight: 2,
      arbitrary: fc.record({ _tag: fc.constant("Compact" as const), rev: revSel, physical: fc.boolean() })
    },
    { weight: withReopen ? 1 : 0, arbitrary: fc.constant({ _tag: "Reopen" as const }) }
  )

// ---------------------------------------------------------------------------------------------
// conversion

const resolve = (sel: RevSel, m: Model): number => {
  switch (sel.k) {
    case "zero":
      return 0
    case "back":
      return Math.max(1, m.rev - sel.n)
    case "ahead":
      return m.rev + sel.n
    case "compacted":
      return m.compactRev > 1 ? m.compactRev - 1 : m.compactRev
    case "neg":
      return -1
  }
}

export const u = (x: string | undefined): Uint8Array | undefined => (x === undefined ? undefined : b(x))

const toCompare = (c: MCompare): Compare => {
  const base = { result: c.result as Compare["result"], key: b(c.key), rangeEnd: u(c.rangeEnd) }
  switch (c.target) {
    case 0:
      return { ...base, target: 0, version: c.num }
    case 1:
      return { ...base, target: 1, createRevision: c.num }
    case 2:
      return { ...base, target: 2, modRevision: c.num }
    case 3:
      return { ...base, target: 3, value: b(c.value) }
    default:
      return { ...base, target: 4, lease: c.lease }
  }
}

const toOp = (op: MOp): RequestOp => {
  switch (op._tag) {
    case "Range":
      return { _tag: "Range", request: toRange(op.request) }
    case "Put":
      return { _tag: "Put", request: toPut(op.request) }
    case "DeleteRange":
      return {
        _tag: "DeleteRange",
        request: { ...op.request, key: b(op.request.key), rangeEnd: u(op.request.rangeEnd) }
      }
    case "Txn":
      return { _tag: "Txn", request: toTxn(op.request) }
  }
}
export const toTxn = (t: MTxn): TxnRequest => ({
  compare: t.compare.map(toCompare),
  success: t.success.map(toOp),
  failure: t.failure.map(toOp)
})
const toRange = (r: MRange) => ({
  ...r,
  key: b(r.key),
  rangeEnd: u(r.rangeEnd),
  sortOrder: r.sortOrder as 0 | 1 | 2 | undefined,
  sortTarget: r.sortTarget as 0 | 1 | 2 | 3 | 4 | undefined
})
export const toPut = (p: MPut) => ({ ...p, key: b(p.key), value: u(p.value) })

export const nkv = (kv: KeyValue): MKV => ({
  key: s(kv.key),
  create: kv.createRevision,
  mod: kv.modRevision,
  version: kv.version,
  value: s(kv.value),
  lease: String(kv.lease)
})
const nErr = (e: EtcdError): NError => ({ error: e.message, code: e.code })
const nOp = (r: ResponseOp): NOp => {
  switch (r._tag) {
    case "Range":
      return {
        Range: {
          rev: r.response.header.revision,
          kvs: r.response.kvs.map(nkv),
          more: r.response.more,
          count: r.response.count
        }
      }
    case "Put":
      return { Put: { rev: r.response.header.revision, prevKv: r.response.prevKv ? nkv(r.response.prevKv) : null } }
    case "DeleteRange":
      return {
        DeleteRange: {
          rev: r.response.header.revision,
          deleted: r.response.deleted,
          prevKvs: r.response.prevKvs.map(nkv)
        }
      }
    case "Txn":
      return { Txn: nTxn(r.response) }
  }
}
export const nTxn = (t: TxnResponse): NTxn => ({
  rev: t.header.revision,
  succeeded: t.succeeded,
  responses: t.responses.map(nOp)
})
export const nEvent = (e: Event): MEvent => ({ type: e.type === 0 ? "PUT" : "DELETE", kv: nkv(e.kv) })

const run = <A, B>(eff: Effect.Effect<A, EtcdError>, f: (a: A) => B): Effect.Effect<B | NError> =>
  Effect.matchCause(eff, {
    onFailure: (cause) => {
      const e = cause._tag === "Fail" ? cause.error : undefined
      if (e instanceof EtcdError) return nErr(e)
      throw new Error(`unexpected failure: ${String(cause)}`)
    },
    onSuccess: f
  })

// ---------------------------------------------------------------------------------------------
// the harness

/** The lessor stand-in: leases 1 and 2 exist; attachments are checked for consistency. */
export class FakeLessor implements LeaseAttachments {
  readonly attached = new Map<string, bigint>()
  readonly violations: Array<string> = []
  exists = (id: bigint) => id === 1n || id === 2n
  attach = (id: bigint, key: Uint8Array) => {
    const k = s(key)
    if (this.attached.has(k)) this.violations.push(`attach ${id} to ${k} already attached to ${this.attached.get(k)}`)
    this.attached.set(k, id)
  }
  detach = (id: bigint, key: Uint8Array) => {
    const k = s(key)
    if (this.attached.get(k) !== id) this.violations.push(`detach ${id} from ${k} attached to ${this.attached.get(k)}`)
    this.attached.delete(k)
  }
  snapshot(): Record<string, string> {
    return Object.fromEntries([...this.attached].map(([k, v]) => [k, String(v)]).sort())
  }
}

export interface Harness {
  store: MvccStoreShape
  scope: Scope.CloseableScope
  lessor: FakeLessor
  /** events per revision seen by the commit listener */
  readonly events: Map<number, ReadonlyArray<MEvent>>
}

export const open = (layer: Layer.Layer<MvccStore, unknown>, h?: Harness): Effect.Effect<Harness> =>
  Effect.gen(function* () {
    const scope = yield* Scope.make()
    const ctx = yield* Layer.buildWithScope(layer, scope).pipe(Effect.orDie)
    const store: MvccStoreShape = Context.get(ctx, MvccStore)
    const lessor = yield* Scope.extend(
      store.attachLessor(() => {
        const l = new FakeLessor()
        for (const { key, lease } of store.keysWithLease()) l.attached.set(s(key), lease)
        return { lessor: l, value: l }
      }),
      scope
    )
    const events = h?.events ?? new Map<number, ReadonlyArray<MEvent>>()
    store.addCommitListener((rev, evs) => {
      if (events.has(rev)) throw new Error(`revision ${rev} committed twice`)
      events.set(rev, evs.map(nEvent))
    })
    return { store, scope, lessor, events }
  })

export const close = (h: Harness): Effect.Effect<void> => Scope.close(h.scope, Exit.void)

/** Runs one command on both; asserts the responses and the visible state agree. */
export const step = (h: Harness, m: Model, cmd: Cmd, reopen: () => Effect.Effect<void>): Effect.Effect<void> =>
  Effect.gen(function* () {
    const st = h.store
    switch (cmd._tag) {
      case "Range": {
        const [minMod, maxMod, minCreate, maxCreate] = cmd.filters.map((f) => (f === null ? 0 : resolve(f, m)))
        const r: MRange = {
          ...cmd.r,
          revision: resolve(cmd.rev, m),
          minModRevision: minMod,
          maxModRevision: maxMod,
          minCreateRevision: minCreate,
          maxCreateRevision: maxCreate
        }
        const got = yield* run(st.range(toRange(r)), (x) => ({
          rev: x.header.revision,
          kvs: x.kvs.map(nkv),
          more: x.more,
          count: x.count
        }))
        same(got, m.rangeRequest(r), () => `range ${JSON.stringify(r)}`)
        break
      }
      case "Put": {
        const got = yield* run(st.put(toPut(cmd.p)), (x) => ({
          rev: x.header.revision,
          prevKv: x.prevKv ? nkv(x.prevKv) : null
        }))
        same(got, m.putRequest(cmd.p), () => `put ${JSON.stringify(cmd.p, big)}`)
        break
      }
      case "Delete": {
        const d = cmd.d
        const got = yield* run(st.deleteRange({ ...d, key: b(d.key), rangeEnd: u(d.rangeEnd) }), (x) => ({
          rev: x.header.revision,
          deleted: x.deleted,
          prevKvs: x.prevKvs.map(nkv)
        }))
        same(got, m.deleteRequest(d), () => `delete ${JSON.stringify(d)}`)
        break
      }
      case "Txn": {
        const got = yield* run(st.txn(toTxn(cmd.t)), nTxn)
        same(got, m.txnRequest(cmd.t), () => `txn ${JSON.stringify(cmd.t, big)}`)
        break
      }
      case "Compact": {
        const rev = resolve(cmd.rev, m)
        const got = yield* run(st.compact(rev, cmd.physical), (x) => ({ rev: x.header.revision }))
        same(got, m.compactRequest(rev), () => `compact ${rev}`)
        break
      }
      case "Reopen":
        yield* reopen()
        break
    }
    checkState(h, m)
  })

const big = (_k: string, v: unknown) => (typeof v === "bigint" ? `${v}n` : v)

/** toEqual with the (costly) context message built only on failure */
const same = (got: unknown, want: unknown, what: () => string): void => {
  try {
    expect(got).toEqual(want)
  } catch (e) {
    throw new Error(`${what()}\n${e instanceof Error ? e.message : String(e)}`)
  }
}

/** rev, watermark, listener events and lessor attachments agree with the model. */
export const checkState = (h: Harness, m: Model): void => {
  expect(h.store.rev()).toBe(m.rev)
  expect(h.store.compactRevision()).toBe(m.compactRev)
  for (let r = 2; r <= m.rev; r++) {
    expect(h.events.get(r), `events of revision ${r}`).toEqual(m.events[r])
  }
  expect(h.lessor.violations).toEqual([])
  expect(h.lessor.snapshot()).toEqual(m.leaseAttachments())
  const kwl = Object.fromEntries(
    h.store
      .keysWithLease()
      .map(({ key, lease }) => [s(key), String(lease)])
      .sort()
  )
  expect(kwl).toEqual(m.leaseAttachments())
}

/** Every readable revision, getAt and eventsBetween agree with the model's history. */
export const checkHistory = (h: Harness, m: Model): Effect.Effect<void> =>
  Effect.gen(function* () {
    const first = Math.max(1, m.compactRev)
    for (let r = first; r <= m.rev; r++) {
      const res = yield* h.store.range({ key: b("\0"), rangeEnd: b("\0"), revision: r }).pipe(Effect.orDie)
      const want = [...m.snapshots[r]!.values()].sort((x, y) => (x.key < y.key ? -1 : 1))
      expect(res.kvs.map(nkv), `state at revision ${r}`).toEqual(want)
      for (const k of KEYS) {
        const got = h.store.getAt(b(k), r)
        expect(got === undefined ? undefined : nkv(got), `getAt(${k}, ${r})`).toEqual(m.snapshots[r]!.get(k))
      }
    }
    // from the watermark itself: compaction keeps revision R complete (tombstones at R included)
    const from = Math.max(2, m.compactRev)
    const want: Array<MEvent> = []
    for (let r = from; r <= m.rev; r++) want.push(...m.events[r]!)
    expect(h.store.eventsBetween(from, m.rev).map(nEvent), `eventsBetween(${from}, ${m.rev})`).toEqual(want)
    // at most two revisions
    const two: Array<MEvent> = []
    for (let r = from; r <= Math.min(m.rev, from + 1); r++) two.push(...m.events[r]!)
    expect(h.store.eventsBetween(from, m.rev, 2).map(nEvent)).toEqual(two)
  })
