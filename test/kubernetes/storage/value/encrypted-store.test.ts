/**
 * The etcd3 store with encryption at rest, on our server: what lands in etcd is ciphertext behind
 * the provider's prefix, key rotation rewrites stale values on update, and a value that does not
 * decrypt is an error for that object only.
 */
import { Effect, Either, Stream } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { EtcdClient } from "../../../../src/client/index.js"
import { toText } from "../../../../src/client/key-value.js"
import { Etcd3Store } from "../../../../src/kubernetes/storage/etcd3/store.js"
import { parseEncryptionConfig } from "../../../../src/kubernetes/storage/value/index.js"
import { type InProcessServer, startInProcess } from "../../../server/support/in-process.js"

const config = (keys: Array<[string, Buffer]>) =>
  Either.getOrThrow(
    parseEncryptionConfig(
      JSON.stringify({
        apiVersion: "apiserver.config.k8s.io/v1",
        kind: "EncryptionConfiguration",
        resources: [
          {
            resources: ["secrets"],
            providers: [{ aesgcm: { keys: keys.map(([name, k]) => ({ name, secret: k.toString("base64") })) } }, { identity: {} }]
          }
        ]
      })
    )
  ).transformerFor({ group: "", resource: "secrets" })

const k1 = Buffer.alloc(32, 1)
const k2 = Buffer.alloc(32, 2)
const secret = (name: string, data: string) => ({ apiVersion: "v1", kind: "Secret", metadata: { name, namespace: "ns" }, data: { v: data } })

describe("etcd3 store with encryption at rest (our server)", () => {
  let server: InProcessServer
  beforeAll(async () => {
    server = await startInProcess()
  })
  afterAll(() => server.close())

  const run = <A, E>(f: (client: EtcdClient["Type"]) => Effect.Effect<A, E>) =>
    Effect.runPromise(Effect.scoped(Effect.flatMap(EtcdClient, f).pipe(Effect.provide(EtcdClient.layer({ endpoints: [server.endpoint] })))))

  it("stores ciphertext, rotates keys, and keeps a corrupt value to its own object", async () => {
    await run((client) =>
      Effect.gen(function*() {
        const base = { pathPrefix: "/enc", resourcePrefix: "/secrets/", groupResource: { group: "", resource: "secrets" } }
        const old = Etcd3Store.makeWith(client, { ...base, transformer: config([["k1", k1]]) })
        yield* old.create("/secrets/ns/a", secret("a", "hunter2"))
        yield* old.create("/secrets/ns/b", secret("b", "other"))
        const raw = yield* client.kv.get("/enc/secrets/ns/a")
        expect(toText(raw.kvs[0]!.value).startsWith("k8s:enc:aesgcm:v1:k1:")).toBe(true)
        expect(toText(raw.kvs[0]!.value)).not.toContain("hunter2")

        // rotation: k2 first, k1 still reads; an update that changes nothing still rewrites with k2
        const rotated = Etcd3Store.makeWith(client, { ...base, transformer: config([["k2", k2], ["k1", k1]]) })
        expect((yield* rotated.get("/secrets/ns/a"))!["data"]).toEqual({ v: "hunter2" })
        const before = raw.kvs[0]!.modRevision
        const same = yield* rotated.guaranteedUpdate("/secrets/ns/a", { tryUpdate: (o) => Effect.succeed({ object: o }) })
        expect(BigInt(same.metadata.resourceVersion!)).toBeGreaterThan(before)
        const rewritten = yield* client.kv.get("/enc/secrets/ns/a")
        expect(toText(rewritten.kvs[0]!.value).startsWith("k8s:enc:aesgcm:v1:k2:")).toBe(true)
        // not stale any more: a no-op update writes nothing
        const again = yield* rotated.guaranteedUpdate("/secrets/ns/a", { tryUpdate: (o) => Effect.succeed({ object: o }) })
        expect(again.metadata.resourceVersion).toBe(same.metadata.resourceVersion)

        // a value no key decrypts (identity, last, refuses encrypted data): Get of that object fails with 500, the other reads fine, a watch ends with ERROR
        const events = yield* rotated.watch("/secrets/", { recursive: true, resourceVersion: again.metadata.resourceVersion })
        yield* client.kv.put("/enc/secrets/ns/b", "k8s:enc:aesgcm:v1:k9:garbage")
        const failed = yield* Effect.flip(rotated.get("/secrets/ns/b"))
        expect(failed._tag).toBe("InternalError")
        expect(failed.message).toBe("Internal error occurred: identity transformer tried to read encrypted data")
        expect((yield* rotated.get("/secrets/ns/a"))!.metadata.name).toBe("a")
        const list = yield* Effect.flip(rotated.getList("/secrets/", { recursive: true }))
        expect(list.message).toBe('Internal error occurred: unable to transform key "/enc/secrets/ns/b": identity transformer tried to read encrypted data')
        const watched = yield* Stream.runCollect(events)
        expect([...watched].map((e) => e.type)).toEqual(["ERROR"])
        expect(watched.pipe((c) => [...c][0]!.object)).toMatchObject({ code: 500, message: "Internal error occurred: identity transformer tried to read encrypted data" })
      }))
  })
})
