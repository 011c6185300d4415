/**
 * value.NewPrefixTransformers and identity's encrypted-data check: the first writes, all read, a
 * read by any other is stale; failures are the apiserver's messages.
 */
import { it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { describe, expect } from "vitest"
import {
  aesCBC,
  aesGCM,
  encryptCheck,
  type FromStorageResult,
  identity,
  type PrefixTransformer,
  prefixTransformers
} from "../../../../src/kubernetes/storage/value/index.js"

const enc = new TextEncoder()
const text = (b: Uint8Array) => Buffer.from(b).toString("utf8")
const read = (r: FromStorageResult) => (r.ok ? { data: text(r.data), stale: r.stale } : { error: r.error })

/** what encryption-config builds: `k8s:enc:aesgcm:v1:` over one `<name>:` transformer per key */
const provider = (kind: "aesgcm" | "aescbc", keys: Array<[string, number]>): PrefixTransformer => ({
  prefix: enc.encode(`k8s:enc:${kind}:v1:`),
  transformer: prefixTransformers(
    keys.map(([name, fill]) => ({
      prefix: enc.encode(`${name}:`),
      transformer: (kind === "aesgcm" ? aesGCM : aesCBC)(Buffer.alloc(32, fill))
    })),
    "no matching key was found for the provided AES transformer"
  )
})
const identityProvider: PrefixTransformer = { prefix: new Uint8Array(0), transformer: encryptCheck }
const resource = (...ps: Array<PrefixTransformer>) => prefixTransformers(ps, "no matching prefix found")

describe("identity", () => {
  it("identity passes bytes through; the encrypt check refuses k8s:enc: data", () => {
    expect(read(identity.fromStorage(enc.encode("k8s:enc:x"), "/k"))).toEqual({ data: "k8s:enc:x", stale: false })
    expect(read(encryptCheck.fromStorage(enc.encode('{"kind":"Secret"}'), "/k"))).toEqual({
      data: '{"kind":"Secret"}',
      stale: false
    })
    expect(read(encryptCheck.fromStorage(enc.encode("k8s:enc:aesgcm:v1:k:xxxx"), "/k"))).toEqual({
      error: "identity transformer tried to read encrypted data"
    })
    // protobuf's k8s\0 prefix is not encrypted data
    expect(encryptCheck.fromStorage(enc.encode("k8s\u0000\n"), "/k").ok).toBe(true)
    expect(text(encryptCheck.toStorage(enc.encode("abc"), "/k"))).toBe("abc")
  })
})

describe("prefix transformers", () => {
  it("writes the exact prefix bytes, then the provider's layout", () => {
    const stored = resource(provider("aesgcm", [["key1", 1]])).toStorage(enc.encode("hello"), "/k")
    const prefix = "k8s:enc:aesgcm:v1:key1:"
    expect(text(stored.subarray(0, prefix.length))).toBe(prefix)
    expect(stored.length).toBe(prefix.length + 12 + 5 + 16)
    const cbc = resource(provider("aescbc", [["old-key", 2]])).toStorage(enc.encode("hello"), "/k")
    expect(text(cbc.subarray(0, "k8s:enc:aescbc:v1:old-key:".length))).toBe("k8s:enc:aescbc:v1:old-key:")
    expect(cbc.length).toBe("k8s:enc:aescbc:v1:old-key:".length + 16 + 16)
    // the body behind the prefix is what the bare transformer reads
    const r = aesGCM(Buffer.alloc(32, 1)).fromStorage(stored.subarray(prefix.length), "/k")
    expect(read(r)).toEqual({ data: "hello", stale: false })
  })

  it("key rotation: the new key writes, the old still reads (stale), a rewrite is fresh", () => {
    const before = resource(provider("aesgcm", [["k1", 1]]), identityProvider)
    const oldValue = before.toStorage(enc.encode("secret"), "/k")
    // step 1 of rotation: the new key is added second, every server can read it; k1 still writes
    const added = resource(
      provider("aesgcm", [
        ["k1", 1],
        ["k2", 2]
      ]),
      identityProvider
    )
    expect(read(added.fromStorage(oldValue, "/k"))).toEqual({ data: "secret", stale: false })
    // step 2: k2 first; k1 values are stale and rewritten with k2
    const rotated = resource(
      provider("aesgcm", [
        ["k2", 2],
        ["k1", 1]
      ]),
      identityProvider
    )
    expect(read(rotated.fromStorage(oldValue, "/k"))).toEqual({ data: "secret", stale: true })
    const rewritten = rotated.toStorage(enc.encode("secret"), "/k")
    expect(text(rewritten.subarray(0, 21))).toBe("k8s:enc:aesgcm:v1:k2:")
    expect(read(rotated.fromStorage(rewritten, "/k"))).toEqual({ data: "secret", stale: false })
    // plain data written before encryption was turned on: read by identity, stale
    expect(read(rotated.fromStorage(enc.encode('{"a":1}'), "/k"))).toEqual({ data: '{"a":1}', stale: true })
    // step 3: k1 removed: its values no longer read
    const dropped = resource(provider("aesgcm", [["k2", 2]]), identityProvider)
    expect(read(dropped.fromStorage(oldValue, "/k"))).toEqual({
      error: "no matching key was found for the provided AES transformer"
    })
  })

  it("provider rotation: aescbc → aesgcm; identity first to decrypt everything", () => {
    const cbcValue = resource(provider("aescbc", [["c", 3]])).toStorage(enc.encode("v"), "/k")
    const gcmFirst = resource(provider("aesgcm", [["g", 4]]), provider("aescbc", [["c", 3]]))
    expect(read(gcmFirst.fromStorage(cbcValue, "/k"))).toEqual({ data: "v", stale: true })
    // turning encryption off: identity first writes plain, still reads the encrypted values (stale)
    const off = resource(identityProvider, provider("aesgcm", [["g", 4]]), provider("aescbc", [["c", 3]]))
    expect(text(off.toStorage(enc.encode("plain"), "/k"))).toBe("plain")
    expect(read(off.fromStorage(cbcValue, "/k"))).toEqual({ data: "v", stale: true })
    expect(read(off.fromStorage(enc.encode("plain"), "/k"))).toEqual({ data: "plain", stale: false })
  })

  it("the same provider twice with the same key name: a failure of the first lets the second try", () => {
    const a = provider("aesgcm", [["k", 1]])
    const b = provider("aesgcm", [["k", 2]])
    const fromB = resource(b).toStorage(enc.encode("x"), "/k")
    expect(read(resource(a, b).fromStorage(fromB, "/k"))).toEqual({ data: "x", stale: true })
    // both fail: one error, deduplicated
    expect(read(resource(a, b).fromStorage(fromB, "/other"))).toEqual({
      error: "cipher: message authentication failed"
    })
  })

  it("errors: no prefix matches; several different failures are aggregated", () => {
    const onlyGCM = resource(provider("aesgcm", [["k", 1]]))
    expect(read(onlyGCM.fromStorage(enc.encode('{"plain":true}'), "/k"))).toEqual({ error: "no matching prefix found" })
    expect(
      read(onlyGCM.fromStorage(enc.encode("k8s:enc:aesgcm:v1:other:xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"), "/k"))
    ).toEqual({
      error: "no matching key was found for the provided AES transformer"
    })
    // identity alone cannot read encrypted data; its refusal is not reported, the no-match error is
    expect(read(resource(identityProvider).fromStorage(enc.encode("k8s:enc:aesgcm:v1:k:x"), "/k"))).toEqual({
      error: "no matching prefix found"
    })
    expect(read(prefixTransformers([identityProvider]).fromStorage(enc.encode("k8s:enc:x"), "/k"))).toEqual({
      error: "the provided value does not match any of the supported transformers"
    })
    const same = enc.encode("p:")
    const mixed = prefixTransformers([
      { prefix: same, transformer: aesGCM(Buffer.alloc(16)) },
      { prefix: same, transformer: aesCBC(Buffer.alloc(16)) }
    ])
    expect(read(mixed.fromStorage(enc.encode(`p:${"z".repeat(40)}`), "/k"))).toEqual({
      error: "[cipher: message authentication failed, the stored data is not a multiple of the block size]"
    })
  })

  it.prop(
    "rotation sequences: any value written by a configuration reads under a later one holding its key, stale unless first",
    [
      fc.uniqueArray(fc.integer({ min: 1, max: 9 }), { minLength: 1, maxLength: 5 }),
      fc.uint8Array({ maxLength: 300 }),
      fc.string()
    ],
    ([ids, data, etcdKey]) => {
      // history of the first key: ids[0] was first, then ids[1] rotated in front, ...
      const configs = ids.map((_, i) =>
        resource(
          provider(
            i % 2 === 0 ? "aesgcm" : "aescbc",
            ids
              .slice(0, i + 1)
              .reverse()
              .map((id) => [`k${id}`, id])
          )
        )
      )
      // every configuration lists the keys of all earlier ones: each reads every earlier write
      for (let w = 0; w < configs.length; w++) {
        const stored = configs[w]!.toStorage(data, etcdKey)
        const r = configs[w]!.fromStorage(stored, etcdKey)
        expect(r.ok && Buffer.from(r.data).equals(Buffer.from(data)) && !r.stale).toBe(true)
      }
      const all = resource(
        provider(
          "aesgcm",
          [...ids].reverse().map((id) => [`k${id}`, id])
        ),
        provider(
          "aescbc",
          [...ids].reverse().map((id) => [`k${id}`, id])
        )
      )
      for (let w = 0; w < configs.length; w++) {
        const r = all.fromStorage(configs[w]!.toStorage(data, etcdKey), etcdKey)
        const fresh = w === configs.length - 1 && w % 2 === 0
        expect(r.ok && Buffer.from(r.data).equals(Buffer.from(data))).toBe(true)
        expect(r.ok && r.stale).toBe(!fresh)
      }
    }
  )
})
