/**
 * Testing.layerApiServer, as a controller test in TypeScript uses it: @effect/vitest's `layer(...)`
 * starts one in-process apiserver (with its own in-memory etcd) for the block, and
 * @kubernetes/client-node talks to its `url`. The tests' bodies run on the TestClock; the
 * apiserver's loops run on the live clock (test-clock.ts): a namespace deleted here is finalized by
 * its namespace controller without the test moving any clock.
 */
import { layer } from "@effect/vitest"
import * as k8s from "@kubernetes/client-node"
import { Duration, Effect, FastCheck as fc } from "effect"
import { expect } from "vitest"
import { Testing } from "../../src/index.js"

const core = (url: string) => {
  const kc = new k8s.KubeConfig()
  kc.loadFromOptions({
    clusters: [{ name: "c", server: url, skipTLSVerify: true }],
    users: [{ name: "u" }],
    contexts: [{ name: "x", cluster: "c", user: "u" }],
    currentContext: "x"
  })
  return kc.makeApiClient(k8s.CoreV1Api)
}

/** the watch events' types for namespace `name` (from resourceVersion `rv`) until one is DELETED */
const untilDeleted = (url: string, name: string, rv: string) =>
  Effect.promise(async () => {
    const res = await fetch(
      `${url}/api/v1/namespaces?watch=1&fieldSelector=metadata.name%3D${name}&resourceVersion=${rv}`
    )
    const types: Array<string> = []
    let buffered = ""
    for await (const chunk of res.body!) {
      buffered += Buffer.from(chunk).toString()
      const lines = buffered.split("\n")
      buffered = lines.pop()!
      for (const line of lines) if (line !== "") types.push(JSON.parse(line).type)
      if (types.includes("DELETED")) break
    }
    return types
  })

layer(Testing.layerApiServer({ namespaceDeletionDelay: Duration.millis(50) }))(
  "Testing.layerApiServer shared by a block's tests",
  (it) => {
    it.effect("client-node writes and reads through it, and its etcd holds the object", () =>
      Effect.gen(function* () {
        const server = yield* Testing.ApiServer
        const api = core(server.url)
        yield* Effect.promise(() =>
          api.createNamespacedConfigMap({ namespace: "default", body: { metadata: { name: "c1" }, data: { a: "1" } } })
        )
        const got = yield* Effect.promise(() => api.readNamespacedConfigMap({ namespace: "default", name: "c1" }))
        expect(got.data).toEqual({ a: "1" })
        const stored = yield* server.client.kv.get("/registry/configmaps/default/c1")
        expect(stored.count).toBe(1n)
      })
    )

    it.effect("its controllers run on the live clock: a deleted namespace goes without the test moving time", () =>
      Effect.gen(function* () {
        const server = yield* Testing.ApiServer
        const api = core(server.url)
        const ns = yield* Effect.promise(() => api.createNamespace({ body: { metadata: { name: "gone" } } }))
        yield* Effect.promise(() => api.deleteNamespace({ name: "gone" }))
        const types = yield* untilDeleted(server.url, "gone", ns.metadata!.resourceVersion!)
        expect(types.at(-1)).toBe("DELETED")
      })
    )

    it.effect.prop(
      "every ConfigMap created is listed with its data",
      { data: fc.dictionary(fc.stringMatching(/^[a-z][a-z0-9]{0,7}$/), fc.string({ maxLength: 16 }), { maxKeys: 4 }) },
      ({ data }) =>
        Effect.gen(function* () {
          const server = yield* Testing.ApiServer
          const api = core(server.url)
          const created = yield* Effect.promise(() =>
            api.createNamespacedConfigMap({ namespace: "default", body: { metadata: { generateName: "p-" }, data } })
          )
          const list = yield* Effect.promise(() => api.listNamespacedConfigMap({ namespace: "default" }))
          const item = list.items.find((i) => i.metadata?.name === created.metadata?.name)
          expect(item?.data ?? {}).toEqual(data)
        }),
      { fastCheck: { numRuns: 20 } }
    )
  }
)
