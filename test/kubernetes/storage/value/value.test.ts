import { it } from "@effect/vitest"
import { Effect, Either, FastCheck as fc } from "effect"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { describe, expect } from "vitest"
import {
  aesCBC,
  aesGCM,
  encryptCheck,
  loadEncryptionConfig,
  parseEncryptionConfig,
  prefixTransformers,
  resourceMatches
} from "../../../../src/kubernetes/storage/value/index.js"

const enc = new TextEncoder()
const text = (b: Uint8Array) => Buffer.from(b).toString("utf8")
const key32 = Buffer.alloc(32, 7)
const key16 = Buffer.alloc(16, 9)
const b64 = (b: Buffer) => b.toString("base64")

const read = (r: ReturnType<ReturnType<typeof aesGCM>["fromStorage"]>) => (r.ok ? { data: text(r.data), stale: r.stale } : { error: r.error })

describe("aesgcm / aescbc (value/encrypt/aes)", () => {
  it.prop("round-trip any bytes under any key", [fc.uint8Array({ maxLength: 2000 }), fc.string({ minLength: 1 })], ([data, etcdKey]) => {
    for (const t of [aesGCM(key32), aesGCM(key16), aesCBC(key32), aesCBC(key16)]) {
      const stored = t.toStorage(data, etcdKey)
      const back = t.fromStorage(stored, etcdKey)
      expect(back.ok && Buffer.from(back.data).equals(Buffer.from(data))).toBe(true)
    }
  })

  it("gcm: nonce, ciphertext, tag; the etcd key is authenticated", () => {
    const t = aesGCM(key32)
    const stored = t.toStorage(enc.encode("hello"), "/registry/secrets/ns/a")
    expect(stored.length).toBe(12 + 5 + 16)
    // decrypt by hand with the layout the apiserver uses
    const d = crypto.createDecipheriv("aes-256-gcm", key32, stored.subarray(0, 12))
    d.setAAD(Buffer.from("/registry/secrets/ns/a"))
    d.setAuthTag(stored.subarray(stored.length - 16))
    expect(Buffer.concat([d.update(stored.subarray(12, stored.length - 16)), d.final()]).toString()).toBe("hello")
    // the same bytes under another key, a flipped bit, a truncated value: refused, never thrown
    expect(read(t.fromStorage(stored, "/registry/secrets/ns/b"))).toEqual({ error: "cipher: message authentication failed" })
    const flipped = Buffer.from(stored)
    flipped[14]! ^= 1
    expect(read(t.fromStorage(flipped, "/registry/secrets/ns/a"))).toEqual({ error: "cipher: message authentication failed" })
    expect(read(t.fromStorage(stored.subarray(0, 20), "k"))).toEqual({ error: "the stored data was shorter than the required size" })
  })

  it("cbc: IV then PKCS#7-padded blocks; bad lengths and padding are errors", () => {
    const t = aesCBC(key32)
    const stored = t.toStorage(enc.encode("0123456789abcdef"), "k")
    expect(stored.length).toBe(16 + 32)
    const d = crypto.createDecipheriv("aes-256-cbc", key32, stored.subarray(0, 16))
    expect(Buffer.concat([d.update(stored.subarray(16)), d.final()]).toString()).toBe("0123456789abcdef")
    expect(read(t.fromStorage(stored.subarray(0, 10), "k"))).toEqual({ error: "the stored data was shorter than the required size" })
    expect(read(t.fromStorage(stored.subarray(0, 40), "k"))).toEqual({ error: "the stored data is not a multiple of the block size" })
    expect(read(aesCBC(Buffer.alloc(32, 1)).fromStorage(stored, "k"))).toMatchObject({ error: expect.stringMatching(/^invalid (PKCS7 data|padding)/) })
  })
})

describe("prefix transformers (key rotation)", () => {
  const p = (name: string) => enc.encode(`k8s:enc:aesgcm:v1:${name}:`)
  const oldKey = { prefix: p("old"), transformer: aesGCM(key16) }
  const newKey = { prefix: p("new"), transformer: aesGCM(key32) }
  const identity = { prefix: new Uint8Array(), transformer: encryptCheck }

  it("the first writes with its prefix; all read; a non-first read is stale", () => {
    const before = prefixTransformers([oldKey, identity])
    const stored = before.toStorage(enc.encode("secret"), "/k")
    expect(text(stored.subarray(0, p("old").length))).toBe("k8s:enc:aesgcm:v1:old:")
    const rotated = prefixTransformers([newKey, oldKey, identity])
    expect(read(rotated.fromStorage(stored, "/k"))).toEqual({ data: "secret", stale: true })
    const rewritten = rotated.toStorage(enc.encode("secret"), "/k")
    expect(text(rewritten.subarray(0, p("new").length))).toBe("k8s:enc:aesgcm:v1:new:")
    expect(read(rotated.fromStorage(rewritten, "/k"))).toEqual({ data: "secret", stale: false })
    // plain data written before encryption was turned on: read through identity, stale
    expect(read(rotated.fromStorage(enc.encode('{"a":1}'), "/k"))).toEqual({ data: '{"a":1}', stale: true })
  })

  it("a value no provider can read gives the apiserver's errors", () => {
    const onlyNew = prefixTransformers([newKey])
    expect(read(onlyNew.fromStorage(enc.encode("plain"), "/k"))).toEqual({ error: "no matching prefix found" })
    const stored = prefixTransformers([oldKey]).toStorage(enc.encode("x"), "/k")
    // identity refuses encrypted data it cannot read
    expect(read(prefixTransformers([identity]).fromStorage(stored, "/k"))).toEqual({ error: "identity transformer tried to read encrypted data" })
  })
})

describe("EncryptionConfiguration", () => {
  const yaml = `apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
  - resources: [secrets, "*.apps"]
    providers:
      - aesgcm:
          keys:
            - name: key1
              secret: ${b64(key32)}
      - identity: {}
`
  it("reads YAML and JSON; the first provider of the matching entry writes", () => {
    const fromYaml = Either.getOrThrow(parseEncryptionConfig(yaml))
    const secrets = fromYaml.transformerFor({ group: "", resource: "secrets" })
    expect(text(secrets.toStorage(enc.encode("s"), "/k")).startsWith("k8s:enc:aesgcm:v1:key1:")).toBe(true)
    expect(text(fromYaml.transformerFor({ group: "apps", resource: "deployments" }).toStorage(enc.encode("d"), "/k")).startsWith("k8s:enc:aesgcm:v1:key1:")).toBe(true)
    // not named: identity
    expect(text(fromYaml.transformerFor({ group: "", resource: "configmaps" }).toStorage(enc.encode("c"), "/k"))).toBe("c")
    const json = JSON.stringify({
      apiVersion: "apiserver.config.k8s.io/v1",
      kind: "EncryptionConfiguration",
      resources: [{ resources: ["configmaps"], providers: [{ aescbc: { keys: [{ name: "k", secret: b64(key32) }] } }] }]
    })
    const fromJson = Either.getOrThrow(parseEncryptionConfig(json))
    expect(text(fromJson.transformerFor({ group: "", resource: "configmaps" }).toStorage(enc.encode("c"), "/k")).startsWith("k8s:enc:aescbc:v1:k:")).toBe(true)
  })

  it("resource patterns: name, name.group, *.group, *.*", () => {
    expect(resourceMatches("secrets", { group: "", resource: "secrets" })).toBe(true)
    expect(resourceMatches("secrets", { group: "apps", resource: "secrets" })).toBe(false)
    expect(resourceMatches("deployments.apps", { group: "apps", resource: "deployments" })).toBe(true)
    expect(resourceMatches("*.apps", { group: "apps", resource: "x" })).toBe(true)
    expect(resourceMatches("*.", { group: "", resource: "x" })).toBe(true)
    expect(resourceMatches("*.*", { group: "example.com", resource: "widgets" })).toBe(true)
  })

  it("refuses bad files with a reason", () => {
    const reason = (t: string) => Either.match(parseEncryptionConfig(t), { onLeft: (e) => `${e.reason}: ${e.message}`, onRight: () => "ok" })
    expect(reason("resources: [")).toMatch(/^Malformed: error while parsing file/)
    expect(reason("apiVersion: v1\nkind: ConfigMap\nresources: []")).toMatch(/^Malformed: /)
    expect(reason(yaml.replace(b64(key32), b64(Buffer.alloc(10))))).toBe(
      'Invalid: resources[0].providers[0].aesgcm.keys[0].secret: Invalid value: "REDACTED": secret is not of the expected length, got 10, expected one of [16 24 32]'
    )
    expect(reason(yaml.replace("- aesgcm:", "- kms:"))).toMatch(/^Unsupported: resources\[0\]\.providers\[0\]: the kms provider is not supported/)
    expect(reason(yaml.replace(b64(key32), "not base64!"))).toMatch(/secrets must be base64 encoded$/)
  })

  it.effect("loads from a file; a missing file is one clear error", () =>
    Effect.gen(function*() {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "enc-"))
      fs.writeFileSync(path.join(dir, "enc.yaml"), yaml)
      const config = yield* loadEncryptionConfig(path.join(dir, "enc.yaml"))
      expect(config.configuration.resources[0]!.resources).toEqual(["secrets", "*.apps"])
      const missing = yield* Effect.flip(loadEncryptionConfig(path.join(dir, "nope.yaml")))
      expect(missing.reason).toBe("Unreadable")
      fs.rmSync(dir, { recursive: true })
    }))
})
