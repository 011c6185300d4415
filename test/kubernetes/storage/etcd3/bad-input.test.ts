/**
 * Hostile input to the store: random keys, resourceVersions, continue tokens and selectors. Every
 * call ends in a value or a typed Status error (never a defect), and nothing stored changes.
 */
import { it } from "@effect/vitest"
import { Cause, Effect, Exit, FastCheck as fc, Stream } from "effect"
import { afterAll, beforeAll, describe, expect } from "vitest"
import { isStatusError } from "../../../../src/kubernetes/api/status.js"
import { parsePredicate } from "../../../../src/kubernetes/storage/selection-predicate.js"
import { type InProcessServer, startInProcess } from "../../../server/support/in-process.js"
import { makeBackend } from "../conformance/backend.js"
import { fails, pod, run, type TestStore } from "../conformance/support.js"

describe("etcd3 store: bad input", () => {
  let server: InProcessServer
  let backend: Awaited<ReturnType<typeof makeBackend>>
  let t: TestStore
  beforeAll(async () => {
    server = await startInProcess()
    backend = await makeBackend("etcd-effect", [server.endpoint])
    t = backend.newStore()
    await run(t.store.create("/pods/ns/keep", pod("ns", "keep")))
  })
  afterAll(async () => {
    await backend?.close()
    await server?.close()
  })

  it("resourceVersions: abc, -1, 2^64 and MaxInt64 get the apiserver's errors", async () => {
    const { store } = t
    const invalid = (v: string, why: string) =>
      `invalid resource version: resourceVersion: Invalid value: "${v}": strconv.ParseUint: parsing "${v}": ${why}`
    for (const [v, why] of [
      ["abc", "invalid syntax"],
      ["-1", "invalid syntax"],
      ["1.5", "invalid syntax"],
      ["18446744073709551616", "value out of range"]
    ]) {
      expect((await fails(store.getList("/pods/", { recursive: true, resourceVersion: v! }))).message).toBe(
        invalid(v!, why!)
      )
      expect((await fails(store.get("/pods/ns/keep", { resourceVersion: v! }))).message).toBe(invalid(v!, why!))
      expect((await fails(store.watch("/pods/", { recursive: true, resourceVersion: v! })))._tag).toBe("Invalid")
    }
    const huge = await fails(
      store.getList("/pods/", {
        recursive: true,
        resourceVersion: "9223372036854775807",
        resourceVersionMatch: "Exact"
      })
    )
    expect(huge._tag).toBe("Timeout")
  })

  const noDefect = async <A>(effect: Effect.Effect<A, unknown>) => {
    const exit = await Effect.runPromiseExit(effect)
    if (Exit.isFailure(exit)) {
      expect(Cause.isDie(exit.cause), String(Cause.pretty(exit.cause))).toBe(false)
      const e = Cause.failureOption(exit.cause)
      expect(e._tag === "Some" && isStatusError(e.value)).toBe(true)
    }
  }

  it.effect.prop(
    "random keys, RVs, tokens and selectors: a value or a Status error, and the stored object is untouched",
    [fc.string(), fc.string(), fc.string(), fc.string(), fc.string()],
    ([key, rv, token, label, field]) =>
      Effect.promise(async () => {
        const { store } = t
        const pred = parsePredicate({ labelSelector: label, fieldSelector: field, continue: token, limit: 2 })
        const predicate = pred._tag === "Right" ? pred.right : undefined
        if (pred._tag === "Left") expect(pred.left._tag).toBe("BadRequest")
        await noDefect(store.get(key, { resourceVersion: rv }))
        await noDefect(store.getList(key, { recursive: true, resourceVersion: rv, predicate }))
        await noDefect(store.getList("/pods/", { recursive: true, predicate }))
        await noDefect(store.stats(key))
        await noDefect(store.delete(`/pods/other/${key}`))
        await noDefect(
          Effect.flatMap(store.watch(key, { recursive: true, resourceVersion: rv, predicate }), (s) =>
            Stream.runDrain(Stream.take(s, 1)).pipe(Effect.timeout("20 millis"), Effect.ignore)
          )
        )
        const kept = await run(store.get("/pods/ns/keep"))
        expect(kept!.metadata.name).toBe("keep")
      }),
    { fastCheck: { numRuns: 60 } }
  )
})
