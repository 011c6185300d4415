/**
 * The apiserver's loops are supervised (issue 30): a defect in the compactor, the CRD controller,
 * the namespace controller or the system namespaces controller fails the program run under
 * failOnFatal (as `etcd-effect apiserver` runs) with that loop's LoopDied — it does not end the
 * loop silently while the server goes on answering. Each test fails (the program never ends)
 * when the loop's `supervised` wrapper is removed. The defects are injected through the loops'
 * observers or a storage whose watch dies, over a real server.
 */
import { it } from "@effect/vitest"
import { Deferred, type Duration, Effect, Exit, Fiber, type Scope, TestClock } from "effect"
import { afterAll, beforeAll, describe, expect } from "vitest"
import { runNamespaceController } from "../../../src/kubernetes/apiserver/controllers/namespace-controller.js"
import { runSystemNamespacesController } from "../../../src/kubernetes/apiserver/controllers/system-namespaces.js"
import { crdResource, runCrdController } from "../../../src/kubernetes/apiserver/crd.js"
import { ResourceRegistry } from "../../../src/kubernetes/apiserver/registry.js"
import { namespaces } from "../../../src/kubernetes/apiserver/resources.js"
import { makeResourceStorage } from "../../../src/kubernetes/apiserver/storage-factory.js"
import { NamespaceLifecycle } from "../../../src/kubernetes/apiserver/write/admission.js"
import { runCompactor } from "../../../src/kubernetes/storage/etcd3/compactor.js"
import type { StorageShape } from "../../../src/kubernetes/storage/interfaces.js"
import { encryptCheck } from "../../../src/kubernetes/storage/value/identity.js"
import { failOnFatal, LoopDied } from "../../../src/supervision/fatal.js"
import { type InProcessServer, startInProcess } from "../../server/support/in-process.js"
import { endedWith } from "../../support/loop-died.js"
import { clientFor } from "../storage/conformance/support.js"

let etcd: InProcessServer
let client: Awaited<ReturnType<typeof clientFor>>

beforeAll(async () => {
  etcd = await startInProcess()
  client = await clientFor([etcd.endpoint])
})
afterAll(async () => {
  await client?.close()
  await etcd?.close()
})

/** A registry of namespaces and CRDs whose storages' watches die once `armed` resolves them. */
const registryWithWatchThatDies = (prefix: string, watched: Deferred.Deferred<void>) =>
  new ResourceRegistry((info) =>
    Effect.map(
      makeResourceStorage(
        {
          client: client.client,
          etcdPrefix: prefix,
          watchCache: false,
          defaultWatchCacheSize: 0,
          transformerFor: () => encryptCheck
        },
        info
      ),
      (storage): StorageShape => ({
        ...storage,
        watch: () => Effect.zipRight(Deferred.succeed(watched, undefined), Effect.die(new Error("watch exploded")))
      })
    )
  )

/** lets the forked loops run what they can */
const settle = Effect.repeatN(Effect.yieldNow(), 50)

/** Runs `loop` under failOnFatal, waits for `reached` (the defect is next), and returns the program's LoopDied. */
const diesWith = (
  loop: Effect.Effect<unknown, never, Scope.Scope>,
  reached: Deferred.Deferred<void>,
  step?: Duration.DurationInput
) =>
  Effect.gen(function* () {
    const fiber = yield* Effect.fork(failOnFatal(Effect.scoped(Effect.zipRight(loop, Effect.never))))
    yield* settle
    if (step !== undefined) yield* TestClock.adjust(step)
    yield* Deferred.await(reached)
    yield* settle
    const e = yield* endedWith(fiber)
    yield* Fiber.interrupt(fiber)
    return e
  })

describe("the apiserver's loops are supervised", () => {
  it.effect("a defect in the compactor (its round observer throws) fails the program", () =>
    Effect.gen(function* () {
      const reached = yield* Deferred.make<void>()
      const onRound = () => {
        Deferred.unsafeDone(reached, Exit.void)
        throw new Error("round observer exploded")
      }
      const e = yield* diesWith(
        Effect.forkScoped(runCompactor(client.client, "1 second", [], onRound)),
        reached,
        "1 second"
      )
      expect(e).toBeInstanceOf(LoopDied)
      expect(e).toMatchObject({
        loop: "apiserver compactor",
        message: "apiserver compactor died: round observer exploded"
      })
    })
  )

  it.effect("a defect in the system namespaces controller (its pass observer throws) fails the program", () =>
    Effect.gen(function* () {
      const reached = yield* Deferred.make<void>()
      const registry = new ResourceRegistry((info) =>
        makeResourceStorage(
          {
            client: client.client,
            etcdPrefix: `/sysns-${process.pid}/`,
            watchCache: false,
            defaultWatchCacheSize: 0,
            transformerFor: () => encryptCheck
          },
          info
        )
      )
      yield* registry.put(namespaces)
      const onPass = () => {
        Deferred.unsafeDone(reached, Exit.void)
        throw new Error("pass observer exploded")
      }
      const e = yield* diesWith(
        runSystemNamespacesController(registry, new NamespaceLifecycle(), "1 minute", onPass),
        reached
      )
      yield* registry.close()
      expect(e).toMatchObject({
        loop: "system namespaces controller",
        message: "system namespaces controller died: pass observer exploded"
      })
    })
  )

  it.effect("a defect in the namespace controller's informer (a namespaces watch that dies) fails the program", () =>
    Effect.gen(function* () {
      const watched = yield* Deferred.make<void>()
      const registry = registryWithWatchThatDies(`/nsc-${process.pid}/`, watched)
      yield* registry.put(namespaces)
      const e = yield* diesWith(
        Effect.forkScoped(runNamespaceController({ registry, lifecycle: new NamespaceLifecycle(), delay: "0 millis" })),
        watched
      )
      yield* registry.close()
      expect(e).toMatchObject({
        loop: "namespace controller's informer",
        message: "namespace controller's informer died: watch exploded"
      })
    })
  )

  it.effect("a defect in the CRD controller (a CRD watch that dies) fails the program", () =>
    Effect.gen(function* () {
      const watched = yield* Deferred.make<void>()
      const etcdPrefix = `/crdc-${process.pid}/`
      const registry = registryWithWatchThatDies(etcdPrefix, watched)
      yield* registry.put(crdResource)
      const crds = registry.byGroupResource(crdResource.group, crdResource.plural)!.storage
      const synced = yield* Deferred.make<void>()
      const e = yield* diesWith(
        Effect.forkScoped(runCrdController({ registry, crds, client: client.client, etcdPrefix }, synced)),
        watched
      )
      yield* registry.close()
      expect(e).toMatchObject({ loop: "CRD controller", message: "CRD controller died: watch exploded" })
    })
  )
})
