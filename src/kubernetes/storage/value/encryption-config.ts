/**
 * The apiserver's --encryption-provider-config (server/options/encryptionconfig/config.go, with
 * apis/apiserver/validation/validation_encryption.go): an EncryptionConfiguration file
 * (apiserver.config.k8s.io/v1; the legacy `v1` / `EncryptionConfig` too), JSON or YAML, decoded
 * with effect/Schema, validated with the apiserver's field errors, and turned into one prefix
 * transformer per group-resource.
 *
 * For each resource the providers are tried in order: the first writes, all read (key rotation:
 * put the new key first, rewrite every object, then drop the old key). Supported providers:
 * identity, aesgcm, aescbc; secretbox and kms pass validation as in the apiserver and are then
 * refused with an `Unsupported` error.
 *
 * Loading happens once, at start-up, so it is plain code returning Either; `loadEncryptionConfig`
 * is the Effect face and `ResourceTransformers.layer(path)` the service.
 */
import { Context, Effect, Either, Layer, ParseResult, Schema } from "effect"
import * as fs from "node:fs"
import * as YAML from "yaml"
import type { GroupResource } from "../../api/status.js"
import { AES_KEY_SIZES, aesCBC, aesGCM } from "./aes.js"
import { encryptCheck } from "./identity.js"
import { aggregateMessage, type PrefixTransformer, prefixTransformers } from "./prefix.js"
import type { ValueTransformer } from "./transformer.js"

// ---------------------------------------------------------------------------------------------
// The file's types (apiserver/v1 types_encryption.go). Decoding is lenient like the apiserver's
// universal decoder: unknown fields are ignored, and a missing or null field is its Go zero value
// (validation then names it).

const NullableString = Schema.optional(Schema.NullOr(Schema.String))
const NullableArray = <S extends Schema.Schema.Any>(s: S) => Schema.optional(Schema.NullOr(Schema.Array(s)))

export const Key = Schema.Struct({ name: NullableString, secret: NullableString })
export const KeysConfiguration = Schema.Struct({ keys: NullableArray(Key) })

export const ProviderConfiguration = Schema.Struct({
  aesgcm: Schema.optional(Schema.NullOr(KeysConfiguration)),
  aescbc: Schema.optional(Schema.NullOr(KeysConfiguration)),
  secretbox: Schema.optional(Schema.NullOr(KeysConfiguration)),
  identity: Schema.optional(Schema.NullOr(Schema.Struct({}))),
  kms: Schema.optional(Schema.NullOr(Schema.Record({ key: Schema.String, value: Schema.Unknown })))
})
export type ProviderConfiguration = typeof ProviderConfiguration.Type

export const ResourceConfiguration = Schema.Struct({
  resources: NullableArray(Schema.String),
  providers: NullableArray(ProviderConfiguration)
})

/** The EncryptionConfiguration file (apiserver.config.k8s.io) as a Schema: resources and their providers. */
export const EncryptionConfiguration = Schema.Struct({
  apiVersion: NullableString,
  kind: NullableString,
  resources: NullableArray(ResourceConfiguration)
})
/** An EncryptionConfiguration as decoded. */
export type EncryptionConfiguration = typeof EncryptionConfiguration.Type

/** The group-versions and kinds the apiserver's config scheme decodes to an EncryptionConfiguration. */
const KNOWN_KINDS: ReadonlyArray<readonly [apiVersion: string, kind: string]> = [
  ["apiserver.config.k8s.io/v1", "EncryptionConfiguration"],
  ["v1", "EncryptionConfig"]
]

/** Why an EncryptionConfiguration cannot be used; `message` is the apiserver's error text. */
export class EncryptionConfigError extends Schema.TaggedError<EncryptionConfigError>()("EncryptionConfigError", {
  reason: Schema.Literal(
    "Unreadable", // the file cannot be read, or is empty
    "Malformed", // not YAML/JSON, not an EncryptionConfiguration, wrong field types
    "Invalid", // fails the apiserver's validation, or a rule is masked by an earlier one
    "Unsupported" // a provider this project does not implement (secretbox, kms)
  ),
  message: Schema.String
}) {}

const configError = (reason: EncryptionConfigError["reason"], message: string) =>
  new EncryptionConfigError({ reason, message })

// ---------------------------------------------------------------------------------------------
// schema.GroupResource parsing, as ParseGroupResource and String()

/** schema.ParseGroupResource: "deployments.apps" → {apps, deployments}; "*." → {"", *}; "*.*" → {*, *} */
export const parseGroupResource = (s: string): GroupResource => {
  const dot = s.indexOf(".")
  return dot === -1 ? { group: "", resource: s } : { group: s.slice(dot + 1), resource: s.slice(0, dot) }
}

/** grYAMLString: how the apiserver names a rule in its errors */
const grString = (gr: GroupResource): string =>
  gr.group === "" && gr.resource === "*" ? "*." : gr.group === "" ? gr.resource : `${gr.resource}.${gr.group}`

const grKey = (gr: GroupResource): string => `${gr.resource}\u0000${gr.group}`

// ---------------------------------------------------------------------------------------------
// ValidateEncryptionConfiguration: field errors in the apiserver's format, all of them collected

/** Go's json.Marshal of the internal ProviderConfiguration (no json tags: Go field names) */
const providerValue = (p: ProviderConfiguration): string => {
  const keys = (c: typeof KeysConfiguration.Type | null | undefined) =>
    c == null
      ? null
      : { Keys: c.keys == null ? null : c.keys.map((k) => ({ Name: k.name ?? "", Secret: k.secret ?? "" })) }
  return JSON.stringify({
    AESGCM: keys(p.aesgcm),
    AESCBC: keys(p.aescbc),
    Secretbox: keys(p.secretbox),
    Identity: p.identity == null ? null : {},
    KMS: p.kms ?? null
  })
}

const required = (field: string, detail: string) => `${field}: Required value: ${detail}`
const invalid = (field: string, value: string, detail: string) => `${field}: Invalid value: ${value}: ${detail}`

const hasCapital = (s: string) => s.toLowerCase() !== s
const sameGR = (a: GroupResource, b: GroupResource) => a.group === b.group && a.resource === b.resource
const isAnyGroupAnyResource = (gr: GroupResource) => gr.group === "*" && gr.resource === "*"

const validateResourceOverlap = (resources: ReadonlyArray<string>, field: string, errs: Array<string>) => {
  if (resources.length < 2) return
  const grs = resources.map(parseGroupResource)
  let hasOverlap = false
  let hasDuplicate = false
  for (let i = 0; i < grs.length; i++) {
    for (let j = 0; j < grs.length; j++) {
      if (i === j) continue
      const r1 = grs[i]!
      const r2 = grs[j]!
      if (sameGR(r1, r2) && !hasDuplicate) {
        hasDuplicate = true
        continue
      }
      if (hasOverlap) continue
      if (isAnyGroupAnyResource(r1)) {
        hasOverlap = true
        continue
      }
      if (r1.group !== r2.group) continue
      if (r1.resource === "*" || r2.resource === "*") hasOverlap = true
    }
  }
  const value = JSON.stringify(resources)
  if (hasDuplicate) errs.push(invalid(field, value, "the same resource cannot be specified multiple times"))
  if (hasOverlap) {
    errs.push(
      invalid(
        field,
        value,
        "using overlapping resources such as 'secrets' and '*.' in the same resource list is not allowed as they will be masked"
      )
    )
  }
}

const validateResourceNames = (resources: ReadonlyArray<string>, field: string, errs: Array<string>) => {
  resources.forEach((res, j) => {
    const at = `${field}[${j}]`
    const gr = parseGroupResource(res)
    const detail = hasCapital(res)
      ? "resource name should not contain capital letters"
      : res === "*"
        ? "use '*.' to encrypt all the resources from core API group or *.* to encrypt all resources"
        : res === "apiserveripinfo" || res === "serviceipallocations" || res === "servicenodeportallocations"
          ? "resources which do not have REST API/s cannot be encrypted"
          : gr.group === "events.k8s.io"
            ? "'*.events.k8s.io' objects are stored using the 'events' API group in etcd. Use 'events' instead in the config file"
            : gr.group === "extensions"
              ? "'extensions' group has been removed and cannot be used for encryption"
              : gr.group === "*" && gr.resource !== "*"
                ? "encrypting the same resource across groups is not supported"
                : undefined
    if (detail !== undefined) errs.push(invalid(at, JSON.stringify(res), detail))
  })
}

/** base64.StdEncoding.DecodeString: padded standard alphabet only (Buffer.from ignores junk) */
const decodeStdBase64 = (s: string): Buffer | undefined =>
  s.length % 4 === 0 && /^[A-Za-z0-9+/]*={0,2}$/.test(s) ? Buffer.from(s, "base64") : undefined

const validateKeys = (
  keys: ReadonlyArray<typeof Key.Type> | null | undefined,
  field: string,
  sizes: ReadonlyArray<number>,
  errs: Array<string>
) => {
  if (keys == null || keys.length === 0) {
    errs.push(required(field, "at least one keys is required"))
    return
  }
  keys.forEach((k, i) => {
    const at = `${field}[${i}]`
    if ((k.name ?? "") === "") errs.push(required(`${at}.name`, "name is a mandatory field for a key"))
    const secret = k.secret ?? ""
    if (secret === "") {
      errs.push(required(`${at}.secret`, "secret is a mandatory field for a key"))
      return
    }
    const bytes = decodeStdBase64(secret)
    if (bytes === undefined) {
      errs.push(invalid(`${at}.secret`, `"REDACTED"`, "secrets must be base64 encoded"))
    } else if (!sizes.includes(bytes.length)) {
      errs.push(
        invalid(
          `${at}.secret`,
          `"REDACTED"`,
          `secret is not of the expected length, got ${bytes.length}, expected one of [${sizes.join(" ")}]`
        )
      )
    }
  })
}

const providerKinds = (p: ProviderConfiguration) =>
  (["kms", "aesgcm", "aescbc", "secretbox", "identity"] as const).filter((k) => p[k] != null)

/** ValidateEncryptionConfiguration(c, reload=false): every field error, in the apiserver's order */
export const validateEncryptionConfiguration = (c: EncryptionConfiguration): ReadonlyArray<string> => {
  const errs: Array<string> = []
  const resources = c.resources ?? []
  if (resources.length === 0) return [required("resources", "at least one resources is required")]
  resources.forEach((conf, i) => {
    const r = `resources[${i}].resources`
    const p = `resources[${i}].providers`
    const names = conf.resources ?? []
    if (names.length === 0) errs.push(required(r, `at least one ${r} is required`))
    validateResourceOverlap(names, r, errs)
    validateResourceNames(names, r, errs)
    const providers = conf.providers ?? []
    if (providers.length === 0) errs.push(required(p, `at least one ${p} is required`))
    providers.forEach((provider, j) => {
      const at = `${p}[${j}]`
      const kinds = providerKinds(provider)
      if (kinds.length === 0) {
        errs.push(
          invalid(
            at,
            providerValue(provider),
            "provider does not contain any of the expected providers: KMS, AESGCM, AESCBC, Secretbox, Identity"
          )
        )
      } else if (kinds.length > 1) {
        errs.push(
          invalid(
            at,
            providerValue(provider),
            "more than one provider specified in a single element, should split into different list elements"
          )
        )
      }
      // kms is refused when the transformers are built; its own fields are not checked here
      if (provider.kms != null) return
      if (provider.aesgcm != null) validateKeys(provider.aesgcm.keys, `${at}.aesgcm.keys`, AES_KEY_SIZES, errs)
      else if (provider.aescbc != null) validateKeys(provider.aescbc.keys, `${at}.aescbc.keys`, AES_KEY_SIZES, errs)
      else if (provider.secretbox != null) validateKeys(provider.secretbox.keys, `${at}.secretbox.keys`, [32], errs)
    })
  })
  return errs
}

// ---------------------------------------------------------------------------------------------
// The transformers (getTransformerOverridesAndKMSPluginProbes, aesPrefixTransformer)

const enc = new TextEncoder()

/** aesPrefixTransformer: `k8s:enc:<aesgcm|aescbc>:v1:` over one `<key name>:` transformer per key */
const aesPrefixTransformer = (kind: "aesgcm" | "aescbc", keys: ReadonlyArray<typeof Key.Type>): PrefixTransformer => {
  const make = kind === "aesgcm" ? aesGCM : aesCBC
  const perKey = keys.map((k) => ({
    prefix: enc.encode(`${k.name ?? ""}:`),
    transformer: make(Buffer.from(k.secret ?? "", "base64"))
  }))
  return {
    prefix: enc.encode(`k8s:enc:${kind}:v1:`),
    transformer: prefixTransformers(perKey, "no matching key was found for the provided AES transformer")
  }
}

const providerTransformer = (p: ProviderConfiguration): Either.Either<PrefixTransformer, EncryptionConfigError> => {
  if (p.aesgcm != null) return Either.right(aesPrefixTransformer("aesgcm", p.aesgcm.keys ?? []))
  if (p.aescbc != null) return Either.right(aesPrefixTransformer("aescbc", p.aescbc.keys ?? []))
  if (p.identity != null) return Either.right({ prefix: new Uint8Array(0), transformer: encryptCheck })
  const kind = p.secretbox != null ? "secretbox" : "kms"
  return Either.left(
    configError(
      "Unsupported",
      `error while building transformers: the ${kind} provider is not supported by etcd-effect (supported providers: identity, aesgcm, aescbc)`
    )
  )
}

/** A loaded configuration: the TypeScript face of encryptionconfig.EncryptionConfiguration's Transformers. */
export interface EncryptionConfig {
  readonly configuration: EncryptionConfiguration
  /** one transformer per configured group-resource (`*.group`, `*.*` included), by its YAML name */
  readonly transformers: ReadonlyMap<string, ValueTransformer>
  /** TransformerForResource: the resource's own rule, else `*.<group>`, else `*.*`, else identity */
  readonly transformerFor: (gr: GroupResource) => ValueTransformer
}

/** Builds every transformer up front, so a bad configuration fails at start-up, not on first use. */
export const fromConfiguration = (
  configuration: EncryptionConfiguration
): Either.Either<EncryptionConfig, EncryptionConfigError> => {
  const errs = validateEncryptionConfiguration(configuration)
  if (errs.length > 0) return Either.left(configError("Invalid", `error while parsing file: ${aggregateMessage(errs)}`))
  const byResource = new Map<string, { gr: GroupResource; list: Array<PrefixTransformer> }>()
  for (const conf of configuration.resources ?? []) {
    const list: Array<PrefixTransformer> = []
    for (const p of conf.providers ?? []) {
      const t = providerTransformer(p)
      if (Either.isLeft(t)) return Either.left(t.left)
      list.push(t.right)
    }
    for (const name of conf.resources ?? []) {
      const gr = parseGroupResource(name)
      // an earlier `*.group` or `*.*` rule would hide this one: refused, not silently ignored
      for (const mask of [
        { group: gr.group, resource: "*" },
        { group: "*", resource: "*" }
      ]) {
        if (byResource.has(grKey(mask))) {
          return Either.left(
            configError(
              "Invalid",
              `error while building transformers: resource "${grString(gr)}" is masked by earlier rule "${grString(mask)}"`
            )
          )
        }
      }
      const entry = byResource.get(grKey(gr)) ?? { gr, list: [] }
      entry.list.push(...list)
      byResource.set(grKey(gr), entry)
    }
  }
  const byKey = new Map<string, ValueTransformer>()
  const transformers = new Map<string, ValueTransformer>()
  for (const [key, { gr, list }] of byResource) {
    const t = prefixTransformers(list, "no matching prefix found")
    byKey.set(key, t)
    transformers.set(grString(gr), t)
  }
  const transformerFor = (gr: GroupResource): ValueTransformer =>
    byKey.get(grKey(gr)) ??
    byKey.get(grKey({ group: gr.group, resource: "*" })) ??
    byKey.get(grKey({ group: "*", resource: "*" })) ??
    encryptCheck
  return Either.right({ configuration, transformers, transformerFor })
}

/** TransformerForResource on a loaded configuration */
export const transformerFor = (config: EncryptionConfig, gr: GroupResource): ValueTransformer =>
  config.transformerFor(gr)

// ---------------------------------------------------------------------------------------------
// Decoding and loading (loadConfig, loadDataAndHash)

/** Decodes the text of a configuration file (YAML, of which JSON is a subset) and builds it. */
export const parseEncryptionConfig = (
  text: string,
  path = "<inline>"
): Either.Either<EncryptionConfig, EncryptionConfigError> => {
  const decodeError = (detail: string) =>
    Either.left(
      configError(
        "Malformed",
        `error while parsing file: error decoding encryption provider configuration file ${JSON.stringify(path)}: ${detail}`
      )
    )
  let doc: unknown
  try {
    doc = YAML.parse(text)
  } catch (e) {
    return decodeError(e instanceof Error ? e.message : String(e))
  }
  if (doc === null || typeof doc !== "object" || Array.isArray(doc)) {
    return decodeError(`couldn't get version/kind; json parse error: the document is not an object`)
  }
  const decoded = Schema.decodeUnknownEither(EncryptionConfiguration)(doc)
  if (Either.isLeft(decoded)) return decodeError(ParseResult.TreeFormatter.formatErrorSync(decoded.left))
  const { apiVersion, kind } = decoded.right
  if (kind == null || kind === "") return decodeError(`Object 'Kind' is missing in '${JSON.stringify(doc)}'`)
  if (!KNOWN_KINDS.some(([v, k]) => v === (apiVersion ?? "") && k === kind)) {
    return decodeError(`no kind ${JSON.stringify(kind)} is registered for version ${JSON.stringify(apiVersion ?? "")}`)
  }
  return fromConfiguration(decoded.right)
}

/** Go's os.ReadFile error text for the usual failures */
const readError = (path: string, e: unknown): string => {
  const code = (e as NodeJS.ErrnoException | undefined)?.code
  if (code === "ENOENT") return `open ${path}: no such file or directory`
  if (code === "EACCES") return `open ${path}: permission denied`
  if (code === "EISDIR") return `read ${path}: is a directory`
  return e instanceof Error ? e.message : String(e)
}

/** LoadEncryptionConfig: reads, decodes, validates and builds --encryption-provider-config. */
export const loadEncryptionConfig = (path: string): Effect.Effect<EncryptionConfig, EncryptionConfigError> =>
  Effect.suspend(() => {
    let text: string
    try {
      text = fs.readFileSync(path, "utf8")
    } catch (e) {
      return Effect.fail(
        configError(
          "Unreadable",
          `error while parsing file: error while loading file: error reading encryption provider configuration file ${JSON.stringify(path)}: ${readError(path, e)}`
        )
      )
    }
    if (text.length === 0) {
      return Effect.fail(
        configError(
          "Unreadable",
          `error while parsing file: error while loading file: encryption provider configuration file ${JSON.stringify(path)} is empty`
        )
      )
    }
    return parseEncryptionConfig(text, path)
  })

/**
 * value.ResourceTransformers as a service: the transformer of each group-resource, from the
 * configuration file. Without a file the apiserver stores everything as it is (identity).
 */
export class ResourceTransformers extends Context.Tag("etcd-effect/kubernetes/ResourceTransformers")<
  ResourceTransformers,
  {
    /** the transformer of a group-resource: its own rule, else `*.<group>`, else `*.*`, else identity */
    readonly transformerFor: (gr: GroupResource) => ValueTransformer
  }
>() {
  /** --encryption-provider-config=path */
  static readonly layer = (path: string): Layer.Layer<ResourceTransformers, EncryptionConfigError> =>
    Layer.effect(ResourceTransformers, loadEncryptionConfig(path))

  /** no encryption configuration: every resource through identity's encrypted-data check */
  static readonly identity: Layer.Layer<ResourceTransformers> = Layer.succeed(ResourceTransformers, {
    transformerFor: () => encryptCheck
  })
}
