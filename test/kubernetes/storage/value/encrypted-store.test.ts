/**
 * The etcd3 store with encryption at rest, on our server and on etcd 3.4: what lands in etcd is
 * ciphertext behind the provider's prefix, key rotation rewrites stale values on update, and a
 * value that does not decrypt (unknown key, tampered, moved to another key) is an error for that
 * object only.
 */
import { Effect, Either, Stream } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { EtcdClient } from "../../../../src/client/index.js"
import { toText } from "../../../../src/client/key-value.js"
import { Etcd3Store } from "../../../../src/kubernetes/storage/etcd3/store.js"
import { parseEncryptionConfig, transformerFor } from "../../../../src/kubernetes/storage/value/index.js"
import { EtcdProcess, skipEtcd } from "../../../support/etcd.js"
import { startInProcess } from "../../../server/support/in-process.js"

const config = (kind: "aesgcm" | "aescbc", keys: Array<[string, Buffer]>) =>
  transformerFor(
    Either.getOrThrow(
      parseEncryptionConfig(
        JSON.stringify({
          apiVersion: "apiserver.config.k8s.io/v1",
          kind: "EncryptionConfiguration",
          resources: [
            {
              resources: ["secrets"],
              providers: [
                { [kind]: { keys: keys.map(([name, k]) => ({ name, secret: k.toString("base64") })) } },
                { identity: {} }
              ]
            }
          ]
        })
      )
    ),
    { group: "", resource: "secrets" }
  )

const k1 = Buffer.alloc(32, 1)
const k2 = Buffer.alloc(32, 2)
const secret = (name: string, data: string) => ({
  apiVersion: "v1",
  kind: "Secret",
  metadata: { name, namespace: "ns" },
  data: { v: data }
})
const internal = (message: string) => `Internal error occurred: ${message}`

const backends: Array<{
  name: string
  skip: boolean
  start: () => Promise<{ endpoint: string; close: () => Promise<void> }>
}> = [
  {
    name: "our server",
    skip: false,
    start: async () => {
      const s = await startInProcess()
      return { endpoint: s.endpoint, close: () => s.close() }
    }
  },
  {
    name: "etcd 3.4",
    skip: skipEtcd,
    start: async () => {
      const e = await EtcdProcess.start()
      return { endpoint: e.endpoint, close: () => e.dispose() }
    }
  }
]

describe.each(backends)("etcd3 store with encryption at rest ($name)", ({ skip, start }) => {
  let backend: Awaited<ReturnType<typeof start>> | undefined
  beforeAll(async () => {
    if (!skip) backend = await start()
  })
  afterAll(() => backend?.close())

  const run = <A, E>(f: (client: EtcdClient["Type"]) => Effect.Effect<A, E>) =>
    Effect.runPromise(
      Effect.scoped(
        Effect.flatMap(EtcdClient, f).pipe(Effect.provide(EtcdClient.layer({ endpoints: [backend!.endpoint] })))
      )
    )
  const base = (prefix: string) => ({
    pathPrefix: prefix,
    resourcePrefix: "/secrets/",
    groupResource: { group: "", resource: "secrets" }
  })

  it.skipIf(skip)("stores ciphertext, rotates keys, and keeps an unknown key to its own object", async () => {
    await run((client) =>
      Effect.gen(function* () {
        const old = Etcd3Store.makeWith(client, { ...base("/enc"), transformer: config("aesgcm", [["k1", k1]]) })
        yield* old.create("/secrets/ns/a", secret("a", "hunter2"))
        yield* old.create("/secrets/ns/b", secret("b", "other"))
        const raw = yield* client.kv.get("/enc/secrets/ns/a")
        expect(toText(raw.kvs[0]!.value).startsWith("k8s:enc:aesgcm:v1:k1:")).toBe(true)
        expect(toText(raw.kvs[0]!.value)).not.toContain("hunter2")

        // rotation: k2 first, k1 still reads; an update that changes nothing still rewrites with k2
        const rotated = Etcd3Store.makeWith(client, {
          ...base("/enc"),
          transformer: config("aesgcm", [
            ["k2", k2],
            ["k1", k1]
          ])
        })
        expect((yield* rotated.get("/secrets/ns/a"))!["data"]).toEqual({ v: "hunter2" })
        const before = raw.kvs[0]!.modRevision
        const same = yield* rotated.guaranteedUpdate("/secrets/ns/a", {
          tryUpdate: (o) => Effect.succeed({ object: o })
        })
        expect(BigInt(same.metadata.resourceVersion!)).toBeGreaterThan(before)
        const rewritten = yield* client.kv.get("/enc/secrets/ns/a")
        expect(toText(rewritten.kvs[0]!.value).startsWith("k8s:enc:aesgcm:v1:k2:")).toBe(true)
        // not stale any more: a no-op update writes nothing
        const again = yield* rotated.guaranteedUpdate("/secrets/ns/a", {
          tryUpdate: (o) => Effect.succeed({ object: o })
        })
        expect(again.metadata.resourceVersion).toBe(same.metadata.resourceVersion)

        // a value written with a key no longer configured: Get of that object fails with 500, the
        // other reads fine, GetList names the key, a watch ends with ERROR
        const events = yield* rotated.watch("/secrets/", {
          recursive: true,
          resourceVersion: again.metadata.resourceVersion
        })
        yield* client.kv.put("/enc/secrets/ns/b", "k8s:enc:aesgcm:v1:k9:garbage")
        const failed = yield* Effect.flip(rotated.get("/secrets/ns/b"))
        expect(failed._tag).toBe("InternalError")
        expect(failed.message).toBe(internal("no matching key was found for the provided AES transformer"))
        expect((yield* rotated.get("/secrets/ns/a"))!.metadata.name).toBe("a")
        const list = yield* Effect.flip(rotated.getList("/secrets/", { recursive: true }))
        expect(list.message).toBe(
          internal(
            'unable to transform key "/enc/secrets/ns/b": no matching key was found for the provided AES transformer'
          )
        )
        const watched = yield* Stream.runCollect(events)
        expect([...watched].map((e) => e.type)).toEqual(["ERROR"])
        expect([...watched][0]!.object).toMatchObject({
          code: 500,
          message: internal("no matching key was found for the provided AES transformer")
        })
      })
    )
  })

  it.skipIf(skip)("aesgcm binds a value to its etcd key; a tampered value fails alone", async () => {
    await run((client) =>
      Effect.gen(function* () {
        const store = Etcd3Store.makeWith(client, { ...base("/aad"), transformer: config("aesgcm", [["k1", k1]]) })
        yield* store.create("/secrets/ns/a", secret("a", "A"))
        yield* store.create("/secrets/ns/c", secret("c", "C"))
        const a = (yield* client.kv.get("/aad/secrets/ns/a")).kvs[0]!.value
        // the ciphertext of a copied under c: the authenticated data differs
        yield* client.kv.put("/aad/secrets/ns/c", a)
        expect((yield* Effect.flip(store.get("/secrets/ns/c"))).message).toBe(
          internal("cipher: message authentication failed")
        )
        // one flipped bit in a's ciphertext
        const tampered = Buffer.from(a)
        tampered[tampered.length - 1]! ^= 0x80
        yield* client.kv.put("/aad/secrets/ns/a", tampered)
        expect((yield* Effect.flip(store.get("/secrets/ns/a"))).message).toBe(
          internal("cipher: message authentication failed")
        )
        // a fresh object beside them reads fine
        yield* store.create("/secrets/ns/d", secret("d", "D"))
        expect((yield* store.get("/secrets/ns/d"))!["data"]).toEqual({ v: "D" })
      })
    )
  })

  it.skipIf(skip)(
    "aescbc values round-trip through the store and are stale under a later aesgcm provider",
    async () => {
      await run((client) =>
        Effect.gen(function* () {
          const cbc = Etcd3Store.makeWith(client, { ...base("/cbc"), transformer: config("aescbc", [["c1", k1]]) })
          yield* cbc.create("/secrets/ns/x", secret("x", "X"))
          expect(
            toText((yield* client.kv.get("/cbc/secrets/ns/x")).kvs[0]!.value).startsWith("k8s:enc:aescbc:v1:c1:")
          ).toBe(true)
          expect((yield* cbc.get("/secrets/ns/x"))!["data"]).toEqual({ v: "X" })
          // identity first (turning encryption off) still reads it, and the next update stores it plain
          const plainFirst = Etcd3Store.makeWith(client, {
            ...base("/cbc"),
            transformer: transformerFor(
              Either.getOrThrow(
                parseEncryptionConfig(
                  JSON.stringify({
                    apiVersion: "apiserver.config.k8s.io/v1",
                    kind: "EncryptionConfiguration",
                    resources: [
                      {
                        resources: ["secrets"],
                        providers: [
                          { identity: {} },
                          { aescbc: { keys: [{ name: "c1", secret: k1.toString("base64") }] } }
                        ]
                      }
                    ]
                  })
                )
              ),
              { group: "", resource: "secrets" }
            )
          })
          yield* plainFirst.guaranteedUpdate("/secrets/ns/x", { tryUpdate: (o) => Effect.succeed({ object: o }) })
          expect(JSON.parse(toText((yield* client.kv.get("/cbc/secrets/ns/x")).kvs[0]!.value))).toMatchObject({
            data: { v: "X" }
          })
        })
      )
    }
  )
})
