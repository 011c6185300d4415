import { describe, expect, it } from "@effect/vitest"
import { FastCheck } from "effect"
import { LeaseQueue } from "../../src/lease/lease-queue.js"

type Op =
  | { readonly op: "set"; readonly id: number; readonly time: number }
  | { readonly op: "remove"; readonly id: number }
  | { readonly op: "pop" }

const opArb: FastCheck.Arbitrary<Op> = FastCheck.oneof(
  FastCheck.record({
    op: FastCheck.constant("set" as const),
    id: FastCheck.integer({ min: 0, max: 20 }),
    time: FastCheck.integer({ min: 0, max: 50 })
  }),
  FastCheck.record({ op: FastCheck.constant("remove" as const), id: FastCheck.integer({ min: 0, max: 20 }) }),
  FastCheck.record({ op: FastCheck.constant("pop" as const) })
)

describe("LeaseQueue", () => {
  it("pops in time order and keeps one entry per lease", () => {
    const q = new LeaseQueue()
    q.registerOrUpdate(1n, 30)
    q.registerOrUpdate(2n, 10)
    q.registerOrUpdate(3n, 20)
    q.registerOrUpdate(2n, 40) // moves, does not duplicate
    expect(q.size).toBe(3)
    expect([q.pop()!.id, q.pop()!.id, q.pop()!.id]).toEqual([3n, 1n, 2n])
    expect(q.pop()).toBeUndefined()
  })

  it.prop(
    "behaves like a map of id → time whose minimum is the head",
    [FastCheck.array(opArb, { maxLength: 80 })],
    ([ops]) => {
      const q = new LeaseQueue()
      const model = new Map<bigint, number>()
      for (const o of ops) {
        if (o.op === "set") {
          q.registerOrUpdate(BigInt(o.id), o.time)
          model.set(BigInt(o.id), o.time)
        } else if (o.op === "remove") {
          q.remove(BigInt(o.id))
          model.delete(BigInt(o.id))
        } else {
          const popped = q.pop()
          if (model.size === 0) {
            expect(popped).toBeUndefined()
          } else {
            const min = Math.min(...model.values())
            expect(popped!.time).toBe(min)
            expect(model.get(popped!.id)).toBe(min)
            model.delete(popped!.id)
          }
        }
        expect(q.size).toBe(model.size)
        for (const [id, t] of model) expect(q.timeOf(id)).toBe(t)
      }
    },
    { fastCheck: { numRuns: 500 } }
  )
})
