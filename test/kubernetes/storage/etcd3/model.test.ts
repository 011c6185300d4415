/**
 * The etcd3 store against a model, on our server: random creates, updates, deletes and compactions;
 * then a List at every revision still held gives the model's state at that revision, and a watch
 * from every such revision, with or without a label selector, gives exactly the events the model
 * derives (into the selector = ADDED, within = MODIFIED, out of it or deleted = DELETED), in order,
 * once; a watch from a compacted revision gets 410.
 */
import { it } from "@effect/vitest"
import { Effect, FastCheck as fc } from "effect"
import { describe, expect } from "vitest"
import type { KubeObject } from "../../../../src/kubernetes/api/object-meta.js"
import { onOurServer } from "../conformance/backend.js"
import { Everything, fails, pod, predicate, run, Watching } from "../conformance/support.js"

type Op =
  | { readonly kind: "create" | "update"; readonly name: string; readonly color: string }
  | { readonly kind: "delete"; readonly name: string }
  | { readonly kind: "compact" }

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constantFrom("create" as const, "update" as const),
      name: fc.constantFrom("a", "b", "c"),
      color: fc.constantFrom("red", "blue")
    })
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("delete" as const), name: fc.constantFrom("a", "b", "c") }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("compact" as const) }) }
)

type State = ReadonlyMap<string, string> // name → color

describe("etcd3 store vs a model (our server)", () => {
  const ours = onOurServer()

  it.effect.prop(
    "List at every revision and watches from every revision match the model",
    [fc.array(opArb, { minLength: 1, maxLength: 12 })],
    ([ops]) =>
      Effect.promise(async () => {
        const { store } = ours().newStore()
        const start = await run(store.getCurrentResourceVersion)
        const states: Array<{ rev: bigint; state: State }> = [{ rev: start, state: new Map() }]
        const changes: Array<{ rev: bigint; name: string; before: string | undefined; after: string | undefined }> = []
        let compactRev = 0n
        let state = new Map<string, string>()
        for (const op of ops) {
          if (op.kind === "compact") {
            compactRev = await ours().compact()
            continue
          }
          const key = `/pods/ns/${op.name}`
          const before = state.get(op.name)
          const obj = pod("ns", op.name, { labels: { color: op.kind === "delete" ? "" : op.color } })
          const r =
            op.kind === "create"
              ? await Effect.runPromise(Effect.either(store.create(key, obj)))
              : op.kind === "update"
                ? await Effect.runPromise(
                    Effect.either(store.guaranteedUpdate(key, { tryUpdate: () => Effect.succeed({ object: obj }) }))
                  )
                : await Effect.runPromise(Effect.either(store.delete(key)))
          // the model says which calls fail: create of an existing, update/delete of a missing key
          const shouldFail = op.kind === "create" ? before !== undefined : before === undefined
          expect(r._tag === "Left", `${op.kind} ${op.name}`).toBe(shouldFail)
          if (r._tag === "Left") {
            expect(r.left._tag).toBe(op.kind === "create" ? "AlreadyExists" : "NotFound")
            continue
          }
          const rev = BigInt(r.right.metadata.resourceVersion!)
          // an update to identical content writes nothing (GuaranteedUpdate's no-op path)
          if (rev <= states[states.length - 1]!.rev) {
            expect(op.kind === "update" && before === op.color).toBe(true)
            continue
          }
          state = new Map(state)
          if (op.kind === "delete") state.delete(op.name)
          else state.set(op.name, op.color)
          states.push({ rev, state })
          changes.push({ rev, name: op.name, before, after: state.get(op.name) })
        }
        const live = states.filter((s) => s.rev >= compactRev)

        // List, Exact, at every revision still held
        for (const { rev, state: s } of live) {
          const list = await run(
            store.getList("/pods/", { recursive: true, resourceVersion: rev.toString(), resourceVersionMatch: "Exact" })
          )
          expect(list.metadata.resourceVersion).toBe(rev.toString())
          expect(list.items.map((o) => [o.metadata.name, o.metadata.labels?.["color"]])).toEqual([...s].sort())
        }

        // watches from every revision still held, with and without a selector
        for (const color of ["red", undefined]) {
          const pred = color === undefined ? Everything : predicate({ label: `color=${color}` })
          const sel = (c: string | undefined) => c !== undefined && (color === undefined || c === color)
          for (const { rev } of live) {
            const expected = changes
              .filter((c) => c.rev > rev)
              .flatMap((c) => {
                const cur = sel(c.after)
                const old = sel(c.before)
                const type = cur && !old ? "ADDED" : cur && old ? "MODIFIED" : old ? "DELETED" : undefined
                return type === undefined ? [] : [`${type} ${c.name} ${c.rev}`]
              })
            const w = await Watching.start(store, "/pods/", {
              recursive: true,
              resourceVersion: rev.toString(),
              predicate: pred
            })
            const got = await w.next(expected.length, 10_000)
            expect(
              got.map(
                (e) =>
                  `${e.type} ${(e.object as KubeObject).metadata.name} ${(e.object as KubeObject).metadata.resourceVersion}`
              )
            ).toEqual(expected)
            await w.none(30)
            await w.stop()
          }
        }

        // below the compaction: 410 for watches and Exact lists
        const gone = states.filter((s) => s.rev < compactRev - 1n)
        for (const { rev } of gone.slice(0, 2)) {
          const w = await Watching.start(store, "/pods/", { recursive: true, resourceVersion: rev.toString() })
          const [e] = await w.ended()
          expect(e).toMatchObject({ type: "ERROR", object: { code: 410, reason: "Expired" } })
          const l = await fails(
            store.getList("/pods/", { recursive: true, resourceVersion: rev.toString(), resourceVersionMatch: "Exact" })
          )
          expect(l._tag).toBe("Expired")
        }
      }),
    { fastCheck: { numRuns: 12, seed: Number(process.env.SEED ?? Date.now()) } }
  )
})
