/**
 * --encryption-provider-config: EncryptionConfiguration files in YAML and JSON, resource rules,
 * and every bad file refused with the apiserver's error text.
 */
import { it } from "@effect/vitest"
import { Effect, Either, Layer } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect } from "vitest"
import {
  type EncryptionConfig,
  type FromStorageResult,
  loadEncryptionConfig,
  parseEncryptionConfig,
  ResourceTransformers,
  transformerFor
} from "../../../../src/kubernetes/storage/value/index.js"

const enc = new TextEncoder()
const text = (b: Uint8Array) => Buffer.from(b).toString("utf8")
const read = (r: FromStorageResult) => (r.ok ? { data: text(r.data), stale: r.stale } : { error: r.error })
const b64 = (size: number, fill: number) => Buffer.alloc(size, fill).toString("base64")
const parse = (s: string) => Either.getOrThrow(parseEncryptionConfig(s))
const failure = (s: string) =>
  Either.match(parseEncryptionConfig(s), { onLeft: (e) => `${e.reason}: ${e.message}`, onRight: () => "parsed" })
/** the prefix a resource's transformer writes ("" for identity) */
const writes = (c: EncryptionConfig, group: string, resource: string) => {
  const stored = Buffer.from(transformerFor(c, { group, resource }).toStorage(enc.encode("{}"), "/k")).toString(
    "latin1"
  )
  return stored === "{}" ? "" : /^k8s:enc:[a-z]+:v1:[^:]*:/.exec(stored)![0]
}

const doc = (resources: unknown) =>
  JSON.stringify({ apiVersion: "apiserver.config.k8s.io/v1", kind: "EncryptionConfiguration", resources })
const gcm = (...keys: Array<[string, string]>) => ({
  aesgcm: { keys: keys.map(([name, secret]) => ({ name, secret })) }
})
const cbc = (...keys: Array<[string, string]>) => ({
  aescbc: { keys: keys.map(([name, secret]) => ({ name, secret })) }
})

const YAML_CONFIG = `# what the Kubernetes docs show
apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
  - resources:
      - secrets
      - configmaps
    providers:
      - aesgcm:
          keys:
            - name: key1
              secret: ${b64(32, 1)}
            - name: key2
              secret: ${b64(16, 2)}
      - aescbc:
          keys:
            - name: key3
              secret: ${b64(24, 3)}
      - identity: {}
  - resources:
      - "*.apps"
    providers:
      - aescbc:
          keys:
            - name: apps
              secret: ${b64(32, 4)}
  - resources:
      - "*.*"
    providers:
      - identity: {}
      - aesgcm:
          keys:
            - name: everything
              secret: ${b64(32, 5)}
`

describe("EncryptionConfiguration", () => {
  it("YAML: each resource gets its entry's providers; the first provider and key write", () => {
    const c = parse(YAML_CONFIG)
    expect(writes(c, "", "secrets")).toBe("k8s:enc:aesgcm:v1:key1:")
    expect(writes(c, "", "configmaps")).toBe("k8s:enc:aesgcm:v1:key1:")
    expect(writes(c, "apps", "deployments")).toBe("k8s:enc:aescbc:v1:apps:")
    expect(writes(c, "example.com", "widgets")).toBe("") // *.*: identity first
    expect(writes(c, "", "pods")).toBe("")
    expect([...c.transformers.keys()].sort()).toEqual(["*.*", "*.apps", "configmaps", "secrets"])
    // every provider of the entry reads; non-first is stale
    const secrets = transformerFor(c, { group: "", resource: "secrets" })
    const byKey3 = transformerFor(parse(doc([{ resources: ["secrets"], providers: [cbc(["key3", b64(24, 3)])] }])), {
      group: "",
      resource: "secrets"
    })
    expect(read(secrets.fromStorage(byKey3.toStorage(enc.encode("s"), "/k"), "/k"))).toEqual({ data: "s", stale: true })
    // *.* reads values written with its second provider (stale) and plain ones
    const everything = transformerFor(c, { group: "x.io", resource: "y" })
    const sealed = transformerFor(parse(doc([{ resources: ["*.*"], providers: [gcm(["everything", b64(32, 5)])] }])), {
      group: "a",
      resource: "b"
    })
    expect(read(everything.fromStorage(sealed.toStorage(enc.encode("z"), "/k"), "/k"))).toEqual({
      data: "z",
      stale: true
    })
  })

  it("JSON, the legacy v1 EncryptionConfig kind, unknown fields ignored, null providers unset", () => {
    const c = parse(doc([{ resources: ["configmaps"], providers: [cbc(["k", b64(32, 1)])], note: "ignored" }]))
    expect(writes(c, "", "configmaps")).toBe("k8s:enc:aescbc:v1:k:")
    expect(c.configuration.kind).toBe("EncryptionConfiguration")
    const legacy = parse(
      JSON.stringify({
        apiVersion: "v1",
        kind: "EncryptionConfig",
        resources: [{ resources: ["secrets"], providers: [{ identity: {} }] }]
      })
    )
    expect(writes(legacy, "", "secrets")).toBe("")
    expect(failure(doc([{ resources: ["secrets"], providers: [{ identity: null }] }]))).toBe(
      'Invalid: error while parsing file: resources[0].providers[0]: Invalid value: {"AESGCM":null,"AESCBC":null,"Secretbox":null,"Identity":null,"KMS":null}: provider does not contain any of the expected providers: KMS, AESGCM, AESCBC, Secretbox, Identity'
    )
  })

  it("lookups: the resource's rule, then *.<group>, then *.*, else identity's encrypted-data check", () => {
    const c = parse(
      doc([
        { resources: ["deployments.apps"], providers: [gcm(["d", b64(16, 1)])] },
        { resources: ["*."], providers: [gcm(["core", b64(16, 2)])] },
        { resources: ["*.apps"], providers: [gcm(["apps", b64(16, 3)])] },
        { resources: ["*.*"], providers: [gcm(["all", b64(16, 4)])] }
      ])
    )
    expect(writes(c, "apps", "deployments")).toBe("k8s:enc:aesgcm:v1:d:")
    expect(writes(c, "apps", "statefulsets")).toBe("k8s:enc:aesgcm:v1:apps:")
    expect(writes(c, "", "secrets")).toBe("k8s:enc:aesgcm:v1:core:")
    expect(writes(c, "batch", "jobs")).toBe("k8s:enc:aesgcm:v1:all:")
    const none = transformerFor(parse(doc([{ resources: ["secrets"], providers: [{ identity: {} }] }])), {
      group: "",
      resource: "configmaps"
    })
    expect(read(none.fromStorage(enc.encode("k8s:enc:aesgcm:v1:x:abc"), "/k"))).toEqual({
      error: "identity transformer tried to read encrypted data"
    })
    expect(read(none.fromStorage(enc.encode("{}"), "/k"))).toEqual({ data: "{}", stale: false })
  })

  it("a resource named in two entries gets both entries' providers, in order", () => {
    const c = parse(
      doc([
        { resources: ["secrets"], providers: [gcm(["new", b64(32, 1)])] },
        { resources: ["secrets"], providers: [cbc(["old", b64(32, 2)])] }
      ])
    )
    const old = transformerFor(parse(doc([{ resources: ["secrets"], providers: [cbc(["old", b64(32, 2)])] }])), {
      group: "",
      resource: "secrets"
    })
    const t = transformerFor(c, { group: "", resource: "secrets" })
    expect(read(t.fromStorage(old.toStorage(enc.encode("v"), "/k"), "/k"))).toEqual({ data: "v", stale: true })
    expect(read(t.fromStorage(enc.encode("plain"), "/k"))).toEqual({ error: "no matching prefix found" })
  })

  it("a rule masked by an earlier *.group or *.* rule is refused", () => {
    expect(
      failure(
        doc([
          { resources: ["*."], providers: [{ identity: {} }] },
          { resources: ["secrets"], providers: [{ identity: {} }] }
        ])
      )
    ).toBe('Invalid: error while building transformers: resource "secrets" is masked by earlier rule "*."')
    expect(
      failure(
        doc([
          { resources: ["*.*"], providers: [{ identity: {} }] },
          { resources: ["deployments.apps"], providers: [{ identity: {} }] }
        ])
      )
    ).toBe('Invalid: error while building transformers: resource "deployments.apps" is masked by earlier rule "*.*"')
  })

  it("validation: the apiserver's field errors, all of them", () => {
    const key = (secret: string) => doc([{ resources: ["secrets"], providers: [gcm(["k", secret])] }])
    expect(failure(key(b64(10, 1)))).toBe(
      'Invalid: error while parsing file: resources[0].providers[0].aesgcm.keys[0].secret: Invalid value: "REDACTED": secret is not of the expected length, got 10, expected one of [16 24 32]'
    )
    expect(failure(key("not base64!"))).toBe(
      'Invalid: error while parsing file: resources[0].providers[0].aesgcm.keys[0].secret: Invalid value: "REDACTED": secrets must be base64 encoded'
    )
    expect(failure(key(b64(32, 1).slice(0, -1)))).toMatch(/secrets must be base64 encoded$/)
    expect(failure(key(""))).toBe(
      "Invalid: error while parsing file: resources[0].providers[0].aesgcm.keys[0].secret: Required value: secret is a mandatory field for a key"
    )
    expect(
      failure(doc([{ resources: ["secrets"], providers: [{ aescbc: { keys: [{ secret: b64(16, 1) }] } }] }]))
    ).toBe(
      "Invalid: error while parsing file: resources[0].providers[0].aescbc.keys[0].name: Required value: name is a mandatory field for a key"
    )
    expect(failure(doc([{ resources: ["secrets"], providers: [{ aescbc: { keys: [] } }] }]))).toBe(
      "Invalid: error while parsing file: resources[0].providers[0].aescbc.keys: Required value: at least one keys is required"
    )
    expect(failure(doc([]))).toBe(
      "Invalid: error while parsing file: resources: Required value: at least one resources is required"
    )
    expect(failure(doc([{ providers: [{ identity: {} }] }]))).toBe(
      "Invalid: error while parsing file: resources[0].resources: Required value: at least one resources[0].resources is required"
    )
    expect(failure(doc([{ resources: ["secrets"], providers: [] }]))).toBe(
      "Invalid: error while parsing file: resources[0].providers: Required value: at least one resources[0].providers is required"
    )
    expect(
      failure(
        doc([
          {
            resources: ["secrets"],
            providers: [{ identity: {}, aescbc: { keys: [{ name: "k", secret: b64(16, 1) }] } }]
          }
        ])
      )
    ).toBe(
      `Invalid: error while parsing file: resources[0].providers[0]: Invalid value: {"AESGCM":null,"AESCBC":{"Keys":[{"Name":"k","Secret":"${b64(16, 1)}"}]},"Secretbox":null,"Identity":{},"KMS":null}: more than one provider specified in a single element, should split into different list elements`
    )
    const names = (...resources: Array<string>) => failure(doc([{ resources, providers: [{ identity: {} }] }]))
    expect(names("Secrets")).toBe(
      'Invalid: error while parsing file: resources[0].resources[0]: Invalid value: "Secrets": resource name should not contain capital letters'
    )
    expect(names("*")).toMatch(
      /resources\[0\]\.resources\[0\]: Invalid value: "\*": use '\*\.' to encrypt all the resources from core API group or \*\.\* to encrypt all resources$/
    )
    expect(names("events.events.k8s.io")).toMatch(/objects are stored using the 'events' API group in etcd/)
    expect(names("ingresses.extensions")).toMatch(
      /'extensions' group has been removed and cannot be used for encryption$/
    )
    expect(names("serviceipallocations")).toMatch(/resources which do not have REST API\/s cannot be encrypted$/)
    expect(names("secrets.*")).toMatch(/encrypting the same resource across groups is not supported$/)
    expect(names("secrets", "secrets")).toBe(
      'Invalid: error while parsing file: resources[0].resources: Invalid value: ["secrets","secrets"]: the same resource cannot be specified multiple times'
    )
    expect(names("secrets", "*.")).toBe(
      `Invalid: error while parsing file: resources[0].resources: Invalid value: ["secrets","*."]: using overlapping resources such as 'secrets' and '*.' in the same resource list is not allowed as they will be masked`
    )
    // several problems: the aggregate, in brackets
    expect(failure(doc([{ resources: ["Secrets"], providers: [gcm(["", b64(7, 1)])] }]))).toBe(
      'Invalid: error while parsing file: [resources[0].resources[0]: Invalid value: "Secrets": resource name should not contain capital letters, resources[0].providers[0].aesgcm.keys[0].name: Required value: name is a mandatory field for a key, resources[0].providers[0].aesgcm.keys[0].secret: Invalid value: "REDACTED": secret is not of the expected length, got 7, expected one of [16 24 32]]'
    )
  })

  it("secretbox and kms are validated, then refused as unsupported", () => {
    expect(
      failure(
        doc([{ resources: ["secrets"], providers: [{ secretbox: { keys: [{ name: "k", secret: b64(32, 1) }] } }] }])
      )
    ).toBe(
      "Unsupported: error while building transformers: the secretbox provider is not supported by etcd-effect (supported providers: identity, aesgcm, aescbc)"
    )
    expect(
      failure(
        doc([{ resources: ["secrets"], providers: [{ secretbox: { keys: [{ name: "k", secret: b64(16, 1) }] } }] }])
      )
    ).toMatch(/^Invalid: .*secretbox\.keys\[0\]\.secret: .*got 16, expected one of \[32\]$/)
    expect(
      failure(
        doc([
          { resources: ["secrets"], providers: [{ kms: { apiVersion: "v2", name: "p", endpoint: "unix:///k.sock" } }] }
        ])
      )
    ).toMatch(/^Unsupported: error while building transformers: the kms provider is not supported/)
  })

  it("decoding: not YAML, not an EncryptionConfiguration, wrong types", () => {
    expect(failure("resources: [")).toMatch(
      /^Malformed: error while parsing file: error decoding encryption provider configuration file "<inline>": /
    )
    expect(failure("apiVersion: v1\nkind: ConfigMap\n")).toBe(
      'Malformed: error while parsing file: error decoding encryption provider configuration file "<inline>": no kind "ConfigMap" is registered for version "v1"'
    )
    expect(failure("apiVersion: apiserver.config.k8s.io/v1\nresources: []\n")).toMatch(/Object 'Kind' is missing in/)
    expect(failure("- just\n- a list\n")).toMatch(/^Malformed: /)
    expect(failure(doc("secrets"))).toMatch(/^Malformed: .*resources/s)
    expect(failure(doc([{ resources: "secrets", providers: [] }]))).toMatch(/^Malformed: /)
  })

  describe("files", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "etcd-effect-enc-"))
    afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))
    const file = (name: string, content: string) => {
      const p = path.join(dir, name)
      fs.writeFileSync(p, content)
      return p
    }

    it.effect("loadEncryptionConfig reads YAML and JSON files", () =>
      Effect.gen(function* () {
        const y = yield* loadEncryptionConfig(file("enc.yaml", YAML_CONFIG))
        expect(writes(y, "", "secrets")).toBe("k8s:enc:aesgcm:v1:key1:")
        const j = yield* loadEncryptionConfig(
          file("enc.json", doc([{ resources: ["secrets"], providers: [cbc(["j", b64(16, 9)])] }]))
        )
        expect(writes(j, "", "secrets")).toBe("k8s:enc:aescbc:v1:j:")
      })
    )

    it.effect("a missing, empty or unreadable file is one clear error", () =>
      Effect.gen(function* () {
        const missing = yield* Effect.flip(loadEncryptionConfig(path.join(dir, "nope.yaml")))
        expect(missing._tag).toBe("EncryptionConfigError")
        expect(missing.reason).toBe("Unreadable")
        expect(missing.message).toBe(
          `error while parsing file: error while loading file: error reading encryption provider configuration file "${dir}/nope.yaml": open ${dir}/nope.yaml: no such file or directory`
        )
        const empty = yield* Effect.flip(loadEncryptionConfig(file("empty.yaml", "")))
        expect(empty.message).toBe(
          `error while parsing file: error while loading file: encryption provider configuration file "${dir}/empty.yaml" is empty`
        )
        const isDir = yield* Effect.flip(loadEncryptionConfig(dir))
        expect(isDir.message).toMatch(/is a directory$/)
        const bad = yield* Effect.flip(loadEncryptionConfig(file("bad.yaml", "apiVersion: v1\nkind: Pod\n")))
        expect(bad.message).toBe(
          `error while parsing file: error decoding encryption provider configuration file "${dir}/bad.yaml": no kind "Pod" is registered for version "v1"`
        )
      })
    )

    it.effect("ResourceTransformers.layer(path) is the service; a bad file fails the layer", () =>
      Effect.gen(function* () {
        const ok = yield* Effect.provide(
          ResourceTransformers,
          ResourceTransformers.layer(file("layer.yaml", YAML_CONFIG))
        )
        expect(
          text(ok.transformerFor({ group: "", resource: "secrets" }).toStorage(enc.encode("x"), "/k")).startsWith(
            "k8s:enc:aesgcm:v1:key1:"
          )
        ).toBe(true)
        const failed = yield* Effect.flip(
          Effect.provide(ResourceTransformers, ResourceTransformers.layer(path.join(dir, "missing")))
        )
        expect(failed.reason).toBe("Unreadable")
        const none = yield* Effect.provide(ResourceTransformers, ResourceTransformers.identity)
        expect(text(none.transformerFor({ group: "", resource: "secrets" }).toStorage(enc.encode("x"), "/k"))).toBe("x")
        expect(Layer.isLayer(ResourceTransformers.identity)).toBe(true)
      })
    )
  })
})
