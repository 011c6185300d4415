/**
 * The controllers an apiserver runs here, on the TestClock, over the write pipeline and an etcd3
 * storage on our embedded server: the namespace controller looks at a terminating namespace 5 s
 * after it changed, empties it and removes it; content with finalizers keeps it (looked at again
 * every estimate/2+1 = 8 s, the conditions say what remains); the system namespaces come back a
 * minute after they are gone.
 */
import { it } from "@effect/vitest"
import { Effect, Exit, Fiber, Scope, TestClock } from "effect"
import { afterAll, beforeAll, describe, expect } from "vitest"
import type { KubeObject } from "../../../src/kubernetes/api/object-meta.js"
import { runNamespaceController } from "../../../src/kubernetes/apiserver/controllers/namespace-controller.js"
import {
  ensureSystemNamespaces,
  runSystemNamespacesController
} from "../../../src/kubernetes/apiserver/controllers/system-namespaces.js"
import type { Obj } from "../../../src/kubernetes/apiserver/kinds/strategy.js"
import { ResourceRegistry } from "../../../src/kubernetes/apiserver/registry.js"
import { configmaps, keyOf, namespaces, secrets } from "../../../src/kubernetes/apiserver/resources.js"
import { makeResourceStorage } from "../../../src/kubernetes/apiserver/storage-factory.js"
import { NamespaceLifecycle } from "../../../src/kubernetes/apiserver/write/admission.js"
import { deleteNamespace } from "../../../src/kubernetes/apiserver/write/namespace-delete.js"
import { internalContext } from "../../../src/kubernetes/apiserver/write/pipeline.js"
import { create, defaulted, update } from "../../../src/kubernetes/apiserver/write/store.js"
import { encryptCheck } from "../../../src/kubernetes/storage/value/identity.js"
import { type InProcessServer, startInProcess } from "../../server/support/in-process.js"
import { clientFor } from "../storage/conformance/support.js"

let etcd: InProcessServer
let client: Awaited<ReturnType<typeof clientFor>>
let registry: ResourceRegistry
const scope = Effect.runSync(Scope.make())
const lifecycle = new NamespaceLifecycle()

beforeAll(async () => {
  etcd = await startInProcess()
  client = await clientFor([etcd.endpoint])
  registry = new ResourceRegistry((info) =>
    makeResourceStorage(
      {
        client: client.client,
        etcdPrefix: `/controllers-${process.pid}/`,
        watchCache: false,
        defaultWatchCacheSize: 0,
        transformerFor: () => encryptCheck
      },
      info
    )
  )
  await Effect.runPromise(Effect.forEach([namespaces, configmaps, secrets], (i) => registry.put(i)))
  await Effect.runPromise(Scope.extend(ensureSystemNamespaces(registry, lifecycle), scope))
})
afterAll(async () => {
  await Effect.runPromise(registry.close())
  await Effect.runPromise(Scope.close(scope, Exit.void))
  await client?.close()
  await etcd?.close()
})

/** real time for the I/O the clock's last step started; the TestClock stays where it is */
const settle = (check: () => Effect.Effect<boolean, unknown>, what = "condition") =>
  Effect.gen(function* () {
    for (let i = 0; i < 500; i++) {
      if (yield* check()) return
      yield* Effect.promise(() => new Promise((r) => setTimeout(r, 10)))
    }
    throw new Error(`not settled: ${what}`)
  })
const quiet = Effect.promise(() => new Promise((r) => setTimeout(r, 100)))

const nsCtx = () => internalContext(registry, lifecycle, namespaces, undefined)!
const cmCtx = (ns: string) => internalContext(registry, lifecycle, configmaps, ns)!
const getNs = (name: string) =>
  registry.byGroupResource("", "namespaces")!.storage.get(keyOf(namespaces, undefined, name), { ignoreNotFound: true })
const listCms = (ns: string) =>
  Effect.map(
    registry.byGroupResource("", "configmaps")!.storage.getList(keyOf(configmaps, ns), { recursive: true }),
    (l) => l.items.map((i) => i.metadata.name)
  )

const makeNs = (name: string) =>
  Effect.flatMap(
    defaulted(nsCtx(), "CREATE", { apiVersion: "v1", kind: "Namespace", metadata: { name } } as Obj),
    (o) => create(nsCtx(), o)
  )
const makeCm = (ns: string, name: string, finalizers?: Array<string>) =>
  create(cmCtx(ns), {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name, namespace: ns, ...(finalizers === undefined ? {} : { finalizers }) }
  } as Obj)

let n = 0
const fresh = () => `ctl-${process.pid}-${n++}`

describe("namespace controller (TestClock)", () => {
  it.scoped("5 s after a namespace is deleted its content goes, then the namespace", () =>
    Effect.gen(function* () {
      const fiber = yield* Effect.fork(runNamespaceController({ registry, lifecycle }))
      const ns = fresh()
      yield* makeNs(ns)
      yield* makeCm(ns, "a")
      yield* makeCm(ns, "b")
      const marked = yield* deleteNamespace(nsCtx(), ns, { dryRun: false })
      expect(marked.deleted).toBe(false)
      expect((marked.object["status"] as { phase: string }).phase).toBe("Terminating")
      yield* TestClock.adjust("4 seconds")
      yield* quiet
      expect(yield* listCms(ns)).toEqual(["a", "b"])
      yield* TestClock.adjust("1 second")
      yield* settle(() => Effect.map(getNs(ns), (o) => o === undefined), "namespace gone")
      expect(yield* listCms(ns)).toEqual([])
      yield* Fiber.interrupt(fiber)
    })
  )

  it.scoped(
    "content with finalizers keeps the namespace (conditions say why; looked at again every 8 s) until they are removed",
    () =>
      Effect.gen(function* () {
        const fiber = yield* Effect.fork(runNamespaceController({ registry, lifecycle }))
        const ns = fresh()
        yield* makeNs(ns)
        yield* makeCm(ns, "held", ["example.com/hold"])
        yield* makeCm(ns, "free")
        yield* deleteNamespace(nsCtx(), ns, { dryRun: false })
        yield* TestClock.adjust("5 seconds")
        const conditionsOf = (o: KubeObject | undefined) =>
          ((o?.["status"] as { conditions?: Array<Record<string, string>> } | undefined)?.conditions ?? []).map((c) => [
            c["type"],
            c["status"],
            c["reason"],
            c["message"]
          ])
        yield* settle(() => Effect.map(getNs(ns), (o) => conditionsOf(o).length === 5), "conditions written")
        expect(conditionsOf(yield* getNs(ns))).toEqual([
          [
            "NamespaceDeletionDiscoveryFailure",
            "False",
            "ResourcesDiscovered",
            "All resources successfully discovered"
          ],
          [
            "NamespaceDeletionGroupVersionParsingFailure",
            "False",
            "ParsedGroupVersions",
            "All legacy kube types successfully parsed"
          ],
          [
            "NamespaceDeletionContentFailure",
            "False",
            "ContentDeleted",
            "All content successfully deleted, may be waiting on finalization"
          ],
          [
            "NamespaceContentRemaining",
            "True",
            "SomeResourcesRemain",
            "Some resources are remaining: configmaps. has 1 resource instances"
          ],
          [
            "NamespaceFinalizersRemaining",
            "True",
            "SomeFinalizersRemain",
            "Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances"
          ]
        ])
        expect(yield* listCms(ns)).toEqual(["held"])
        // the finalizer's owner lets go: the next look (8 s later) finishes the namespace
        yield* update(cmCtx(ns), "held", (cur) =>
          Effect.sync(
            () => ({ ...structuredClone(cur), metadata: { ...structuredClone(cur.metadata), finalizers: [] } }) as Obj
          )
        )
        expect(yield* listCms(ns)).toEqual([])
        yield* quiet
        expect(yield* getNs(ns)).toBeDefined()
        yield* TestClock.adjust("8 seconds")
        yield* settle(() => Effect.map(getNs(ns), (o) => o === undefined), "namespace gone")
        yield* Fiber.interrupt(fiber)
      })
  )
})

describe("system namespaces controller (TestClock)", () => {
  it.scoped("a system namespace that is gone comes back within a minute; one that exists is left alone", () =>
    Effect.gen(function* () {
      const store = registry.byGroupResource("", "namespaces")!.storage
      const before = (yield* getNs("default"))!
      let passes = 0
      yield* runSystemNamespacesController(registry, lifecycle, "1 minute", () => passes++)
      // its first pass (at once) finds them all
      yield* settle(() => Effect.succeed(passes === 1), "first pass")
      // kube-node-lease is not immortal: gone (as if its deletion had finished)
      yield* store.delete(keyOf(namespaces, undefined, "kube-node-lease"))
      yield* TestClock.adjust("59 seconds")
      yield* quiet
      expect(passes).toBe(1)
      expect(yield* getNs("kube-node-lease")).toBeUndefined()
      yield* TestClock.adjust("1 second")
      yield* settle(() => Effect.map(getNs("kube-node-lease"), (o) => o !== undefined), "recreated")
      const back = (yield* getNs("kube-node-lease"))!
      expect(back["status"]).toEqual({ phase: "Active" })
      expect(back["spec"]).toEqual({ finalizers: ["kubernetes"] })
      expect((yield* getNs("default"))!.metadata.resourceVersion).toBe(before.metadata.resourceVersion)
    })
  )
})
