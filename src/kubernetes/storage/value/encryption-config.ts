/**
 * apiserver.config.k8s.io/v1 EncryptionConfiguration (the file of --encryption-provider-config),
 * JSON or YAML, decoded with effect/Schema. For each resource the providers are tried in order:
 * the first writes, all read (key rotation: put the new key first, rewrite, drop the old one).
 * Supported providers: identity, aesgcm, aescbc; kms and secretbox are refused with a clear error.
 */
import { Effect, Either, ParseResult, Schema } from "effect"
import * as fs from "node:fs"
import * as YAML from "yaml"
import type { GroupResource } from "../../api/status.js"
import { aesCBC, aesGCM } from "./aes.js"
import { encryptCheck } from "./identity.js"
import { type PrefixTransformer, prefixTransformers } from "./prefix.js"
import { identity, type ValueTransformer } from "./transformer.js"

const Key = Schema.Struct({ name: Schema.String, secret: Schema.String })
const AesConfig = Schema.Struct({ keys: Schema.Array(Key) })

const Provider = Schema.Struct({
  identity: Schema.optional(Schema.Struct({})),
  aesgcm: Schema.optional(AesConfig),
  aescbc: Schema.optional(AesConfig),
  secretbox: Schema.optional(Schema.Unknown),
  kms: Schema.optional(Schema.Unknown)
})
type Provider = typeof Provider.Type

export const EncryptionConfiguration = Schema.Struct({
  apiVersion: Schema.Literal("apiserver.config.k8s.io/v1", "apiserver.k8s.io/v1"),
  kind: Schema.Literal("EncryptionConfiguration", "EncryptionConfig"),
  resources: Schema.Array(
    Schema.Struct({
      resources: Schema.Array(Schema.String),
      providers: Schema.Array(Provider)
    })
  )
})
export type EncryptionConfiguration = typeof EncryptionConfiguration.Type

/** Why an EncryptionConfiguration cannot be used. */
export class EncryptionConfigError extends Schema.TaggedError<EncryptionConfigError>()("EncryptionConfigError", {
  reason: Schema.Literal("Unreadable", "Malformed", "Invalid", "Unsupported"),
  message: Schema.String
}) {}

const KEY_SIZES = [16, 24, 32]
const enc = new TextEncoder()

/** The transformers of one provider, one per key (each behind its own prefix). */
const providerTransformers = (p: Provider, at: string): Either.Either<Array<PrefixTransformer>, EncryptionConfigError> => {
  const set = (["identity", "aesgcm", "aescbc", "secretbox", "kms"] as const).filter((k) => p[k] !== undefined)
  if (set.length !== 1) {
    return Either.left(
      new EncryptionConfigError({ reason: "Invalid", message: `${at}: exactly one provider must be configured, found ${set.length}` })
    )
  }
  const kind = set[0]!
  if (kind === "identity") return Either.right([{ prefix: new Uint8Array(0), transformer: encryptCheck }])
  if (kind === "secretbox" || kind === "kms") {
    return Either.left(new EncryptionConfigError({ reason: "Unsupported", message: `${at}: the ${kind} provider is not supported (use aesgcm or aescbc)` }))
  }
  const keys = p[kind]!.keys
  if (keys.length === 0) return Either.left(new EncryptionConfigError({ reason: "Invalid", message: `${at}.${kind}.keys: Required value` }))
  const out: Array<PrefixTransformer> = []
  for (const [i, k] of keys.entries()) {
    const secret = Buffer.from(k.secret, "base64")
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(k.secret.trim())) {
      return Either.left(new EncryptionConfigError({ reason: "Invalid", message: `${at}.${kind}.keys[${i}].secret: Invalid value: "REDACTED": secrets must be base64 encoded` }))
    }
    if (!KEY_SIZES.includes(secret.length)) {
      return Either.left(
        new EncryptionConfigError({
          reason: "Invalid",
          message: `${at}.${kind}.keys[${i}].secret: Invalid value: "REDACTED": secret is not of the expected length, got ${secret.length}, expected one of [16 24 32]`
        })
      )
    }
    if (k.name === "") return Either.left(new EncryptionConfigError({ reason: "Invalid", message: `${at}.${kind}.keys[${i}].name: Required value` }))
    out.push({
      prefix: enc.encode(`k8s:enc:${kind}:v1:${k.name}:`),
      transformer: kind === "aesgcm" ? aesGCM(secret) : aesCBC(secret)
    })
  }
  return Either.right(out)
}

/** Whether a configured resource name ("secrets", "deployments.apps", "*.apps", "*.*", "*.") covers `gr`. */
export const resourceMatches = (pattern: string, gr: GroupResource): boolean => {
  if (pattern === "*.*") return true
  const dot = pattern.indexOf(".")
  const resource = dot === -1 ? pattern : pattern.slice(0, dot)
  const group = dot === -1 ? "" : pattern.slice(dot + 1)
  return group === gr.group && (resource === "*" || resource === gr.resource)
}

export interface EncryptionConfig {
  readonly configuration: EncryptionConfiguration
  /** the transformer of a resource (identity, as the apiserver, when no entry names it) */
  readonly transformerFor: (gr: GroupResource) => ValueTransformer
}

/** Builds every transformer up front, so a bad key fails at start-up, not on first use. */
export const fromConfiguration = (configuration: EncryptionConfiguration): Either.Either<EncryptionConfig, EncryptionConfigError> => {
  const entries: Array<{ readonly patterns: ReadonlyArray<string>; readonly transformer: ValueTransformer }> = []
  for (const [i, r] of configuration.resources.entries()) {
    if (r.providers.length === 0) {
      return Either.left(new EncryptionConfigError({ reason: "Invalid", message: `resources[${i}].providers: Required value` }))
    }
    const all: Array<PrefixTransformer> = []
    for (const [j, p] of r.providers.entries()) {
      const ts = providerTransformers(p, `resources[${i}].providers[${j}]`)
      if (Either.isLeft(ts)) return Either.left(ts.left)
      all.push(...ts.right)
    }
    entries.push({ patterns: r.resources, transformer: prefixTransformers(all) })
  }
  return Either.right({
    configuration,
    transformerFor: (gr) => entries.find((e) => e.patterns.some((p) => resourceMatches(p, gr)))?.transformer ?? identity
  })
}

/** Parses the text of a configuration file (YAML, of which JSON is a subset). */
export const parseEncryptionConfig = (text: string): Either.Either<EncryptionConfig, EncryptionConfigError> => {
  let doc: unknown
  try {
    doc = YAML.parse(text)
  } catch (e) {
    return Either.left(new EncryptionConfigError({ reason: "Malformed", message: `error while parsing file: ${e instanceof Error ? e.message : String(e)}` }))
  }
  const decoded = Schema.decodeUnknownEither(EncryptionConfiguration, { onExcessProperty: "error" })(doc)
  if (Either.isLeft(decoded)) {
    return Either.left(
      new EncryptionConfigError({ reason: "Malformed", message: ParseResult.TreeFormatter.formatErrorSync(decoded.left) })
    )
  }
  return fromConfiguration(decoded.right)
}

/** Reads and parses --encryption-provider-config. */
export const loadEncryptionConfig = (path: string): Effect.Effect<EncryptionConfig, EncryptionConfigError> =>
  Effect.flatMap(
    Effect.try({
      try: () => fs.readFileSync(path, "utf8"),
      catch: (e) =>
        new EncryptionConfigError({ reason: "Unreadable", message: `error opening encryption provider configuration file "${path}": ${e instanceof Error ? e.message : String(e)}` })
    }),
    (text) => parseEncryptionConfig(text)
  )
