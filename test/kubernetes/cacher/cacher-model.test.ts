/**
 * The Cacher against the storage it caches, as the model: random writes, with watchers started
 * at random points (from the current RV or RV 0, with or without a label selector); every watcher
 * of the cache sees exactly the events a direct etcd3 watch with the same RV and selector sees,
 * in order, once (initial ADDED events of RV 0 included).
 */
import { it } from "@effect/vitest"
import { Effect, Exit, FastCheck as fc, Scope } from "effect"
import { describe, expect } from "vitest"
import type { KubeObject } from "../../../src/kubernetes/api/object-meta.js"
import type { WatchEvent } from "../../../src/kubernetes/api/watch-event.js"
import { watchInto } from "../../../src/kubernetes/storage/watch-sink.js"
import { onOurServer } from "../storage/conformance/backend.js"
import { Everything, pod, predicate, run, Watching } from "../storage/conformance/support.js"
import { cacherOver } from "./support.js"

type Op =
  | { readonly kind: "put"; readonly name: string; readonly color: string }
  | { readonly kind: "delete"; readonly name: string }
const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("put" as const),
      name: fc.constantFrom("a", "b", "c", "d"),
      color: fc.constantFrom("red", "blue")
    })
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant("delete" as const), name: fc.constantFrom("a", "b", "c", "d") })
  }
)
const watcherArb = fc.record({
  at: fc.nat(15),
  from: fc.constantFrom("now" as const, "zero" as const),
  color: fc.constantFrom("red", "blue", undefined)
})

const show = (events: ReadonlyArray<WatchEvent>) =>
  events.map(
    (e) =>
      `${e.type} ${(e.object as KubeObject).metadata.name} ${(e.object as KubeObject).metadata.resourceVersion} ${JSON.stringify((e.object as KubeObject).metadata.labels ?? {})}`
  )

describe("Cacher vs direct storage watches (our server)", () => {
  const ours = onOurServer()

  it.effect.prop(
    "every cache watcher sees exactly what the same watch on etcd sees",
    [fc.array(opArb, { minLength: 1, maxLength: 16 }), fc.array(watcherArb, { minLength: 1, maxLength: 4 })],
    ([ops, specs]) =>
      Effect.promise(async () => {
        const { store } = ours().newStore()
        const { cacher, close } = await cacherOver(store)
        const pairs: Array<{ cached: Watching; direct: Watching; expected: () => number }> = []
        const live = new Map<string, string>() // name → color
        const changes: Array<{ name: string; before: string | undefined; after: string | undefined }> = []
        for (let i = 0; i <= ops.length; i++) {
          for (const spec of specs.filter((s) => Math.min(s.at, ops.length) === i)) {
            const pred = spec.color === undefined ? Everything : predicate({ label: `color=${spec.color}` })
            // the cache must have caught up with what was written so far, as a client's list would ensure
            const rv = await run(store.getCurrentResourceVersion)
            await run(
              cacher.getList("/pods/", {
                recursive: true,
                resourceVersion: rv.toString(),
                resourceVersionMatch: "NotOlderThan"
              })
            )
            const from = spec.from === "zero" ? "0" : rv.toString()
            // how many events the model says this watch gets: initial ADDEDs, then selector transitions
            const sel = (c: string | undefined) => c !== undefined && (spec.color === undefined || c === spec.color)
            const initial = spec.from === "zero" ? [...live.values()].filter(sel).length : 0
            const since = changes.length
            const expected = () => changes.slice(since).filter((c) => sel(c.before) || sel(c.after)).length
            const cached = await Watching.start(cacher, "/pods/", {
              recursive: true,
              resourceVersion: from,
              predicate: pred
            })
            const direct = await Watching.start(store, "/pods/", {
              recursive: true,
              resourceVersion: from,
              predicate: pred
            })
            // RV 0: the current objects first (taken before the next write, on both sides)
            const [ia, ib] = await Promise.all([cached.next(initial, 15_000), direct.next(initial, 15_000)])
            expect(show(ia)).toEqual(show(ib))
            pairs.push({ expected, cached, direct })
          }
          const op = ops[i]
          if (op === undefined) break
          const key = `/pods/ns/${op.name}`
          const before = live.get(op.name)
          if (op.kind === "put") {
            const obj = pod("ns", op.name, { labels: { color: op.color } })
            if (before === op.color) continue // an identical update writes nothing
            if (before !== undefined)
              await run(store.guaranteedUpdate(key, { tryUpdate: () => Effect.succeed({ object: obj }) }))
            else await run(store.create(key, obj))
            live.set(op.name, op.color)
            changes.push({ name: op.name, before, after: op.color })
          } else if (before !== undefined) {
            await run(store.delete(key))
            live.delete(op.name)
            changes.push({ name: op.name, before, after: undefined })
          }
        }
        for (const { cached, direct, expected } of pairs) {
          const n = expected()
          const [a, b] = await Promise.all([cached.next(n, 15_000), direct.next(n, 15_000)])
          expect(show(a)).toEqual(show(b))
          await Promise.all([cached.none(50), direct.none(50)])
          await cached.stop()
          await direct.stop()
        }
        await close()
      }),
    { fastCheck: { numRuns: 8 } }
  )
})

/**
 * Sink watchers against the same model, with the hard parts: watches from any RV written so far,
 * consumers that go full and resume later, and watchers stopped midway. A watcher that is not
 * terminated (or stopped) sees exactly the events the direct etcd3 watch from the same RV sees;
 * one that is sees a prefix of them; none sees an ERROR.
 */
const sinkSpecArb = fc.record({
  at: fc.nat(15),
  back: fc.nat(15),
  color: fc.constantFrom("red", "blue", undefined),
  pauseEvery: fc.constantFrom(0, 1, 3),
  pauseMs: fc.constantFrom(1, 150),
  stopAfter: fc.option(fc.nat(15), { nil: undefined })
})

describe("Cacher sink watchers vs direct storage watches (our server)", () => {
  const ours = onOurServer()

  it.effect.prop(
    "paused, resumed and stopped sinks from any past RV see exactly (a prefix of) etcd's events",
    [fc.array(opArb, { minLength: 1, maxLength: 16 }), fc.array(sinkSpecArb, { minLength: 1, maxLength: 5 })],
    ([ops, specs]) =>
      Effect.promise(async () => {
        const { store } = ours().newStore()
        const { cacher, close } = await cacherOver(store)
        const rvs: Array<bigint> = [await run(store.getCurrentResourceVersion)]
        const live = new Map<string, string>()
        interface Sinked {
          readonly got: Array<WatchEvent>
          ends: number
          stopped: boolean
          readonly direct: Watching
          readonly stop: () => Promise<void>
          readonly spec: (typeof specs)[number]
        }
        const sinks: Array<Sinked> = []
        const timers = new Set<ReturnType<typeof setTimeout>>()
        for (let i = 0; i <= ops.length; i++) {
          for (const spec of specs.filter((s) => Math.min(s.at, ops.length) === i)) {
            const pred = spec.color === undefined ? Everything : predicate({ label: `color=${spec.color}` })
            await run(
              cacher.getList("/pods/", {
                recursive: true,
                resourceVersion: rvs[rvs.length - 1]!.toString(),
                resourceVersionMatch: "NotOlderThan"
              })
            )
            const from = rvs[Math.max(0, rvs.length - 1 - spec.back)]!.toString()
            const got: Array<WatchEvent> = []
            const wscope = Effect.runSync(Scope.make())
            let handle: { resume: () => void } | undefined
            const entry: Sinked = {
              got,
              ends: 0,
              stopped: false,
              direct: await Watching.start(store, "/pods/", {
                recursive: true,
                resourceVersion: from,
                predicate: pred
              }),
              stop: () => Effect.runPromise(Scope.close(wscope, Exit.void)),
              spec
            }
            const sink = {
              push: (evs: ReadonlyArray<WatchEvent>) => {
                got.push(...evs)
                if (spec.pauseEvery === 0 || got.length % spec.pauseEvery !== 0) return true
                // full for a moment: resumed from a timer, as a socket's drain would
                const t = setTimeout(() => (timers.delete(t), handle?.resume()), spec.pauseMs)
                timers.add(t)
                return false
              },
              end: () => void entry.ends++
            }
            handle = await Effect.runPromise(
              Scope.extend(
                watchInto(cacher, "/pods/", { recursive: true, resourceVersion: from, predicate: pred }, sink),
                wscope
              )
            )
            sinks.push(entry)
          }
          for (const s of sinks) {
            if (!s.stopped && s.spec.stopAfter !== undefined && s.spec.at + s.spec.stopAfter === i) {
              s.stopped = true
              await s.stop()
            }
          }
          const op = ops[i]
          if (op === undefined) break
          const key = `/pods/ns/${op.name}`
          const before = live.get(op.name)
          if (op.kind === "put") {
            if (before === op.color) continue
            const obj = pod("ns", op.name, { labels: { color: op.color } })
            const out =
              before !== undefined
                ? await run(store.guaranteedUpdate(key, { tryUpdate: () => Effect.succeed({ object: obj }) }))
                : await run(store.create(key, obj))
            live.set(op.name, op.color)
            rvs.push(BigInt(out.metadata.resourceVersion!))
          } else if (before !== undefined) {
            const out = await run(store.delete(key))
            live.delete(op.name)
            rvs.push(BigInt(out.metadata.resourceVersion!))
          }
        }
        // every write dispatched, and every paused sink resumed: each has all it will get. With no
        // write there is no event to dispatch (the dispatcher's RV moves only with events and
        // bookmarks), so there is nothing to wait for.
        const last = rvs.length > 1 ? rvs[rvs.length - 1]! : 0n
        for (let i = 0; i < 6000 && (cacher.internals.dispatchedRV() < last || timers.size > 0); i++)
          await new Promise((r) => setTimeout(r, 5))
        expect(cacher.internals.dispatchedRV()).toBeGreaterThanOrEqual(last)
        expect(timers.size).toBe(0)
        const terminated = cacher.internals.terminatedCount()
        let cut = 0
        for (const s of sinks) {
          expect(s.got.every((e) => e.type !== "ERROR")).toBe(true)
          const direct = await s.direct.next(s.got.length, 15_000)
          expect(show(s.got)).toEqual(show(direct))
          if (s.stopped || s.ends > 0) cut++
          else await s.direct.none(50) // not stopped, not terminated: nothing more than it got
          await s.direct.stop()
          await s.stop()
        }
        expect(cut).toBeGreaterThanOrEqual(terminated)
        await close()
      }),
    { fastCheck: { numRuns: 10 } }
  )
})
