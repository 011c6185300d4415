/** A Cacher over a store of pods, ready, in a scope of its own that `close` ends. */
import { Effect, Exit, Scope } from "effect"
import { Cacher, type CacherConfigShape } from "../../../src/kubernetes/cacher/cacher.js"
import type { StorageShape } from "../../../src/kubernetes/storage/interfaces.js"
import { podAttrs } from "../storage/conformance/support.js"

export const cacherOver = async (underlying: StorageShape, config: Partial<CacherConfigShape> = {}) => {
  const scope = Effect.runSync(Scope.make())
  const cacher = Effect.runSync(
    Scope.extend(
      Cacher.make(underlying, {
        resourcePrefix: "/pods/",
        groupResource: { group: "", resource: "pods" },
        getAttrs: podAttrs,
        typeMeta: { apiVersion: "v1", kind: "Pod" },
        ...config
      }),
      scope
    )
  )
  for (let i = 0; i < 2000 && !cacher.internals.ready.isReady; i++) await new Promise((r) => setTimeout(r, 5))
  if (!cacher.internals.ready.isReady) throw new Error("the cache did not become ready")
  return { cacher, close: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
}
