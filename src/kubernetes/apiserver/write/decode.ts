/**
 * Stage 1 of the write pipeline: decode the request body by its content type. A `BodyDecoder`
 * turns bytes into a JSON document (JSON as Go reads it; YAML as sigs.k8s.io/yaml converts it, YAML
 * 1.1 with its booleans) with the strict decoder's duplicate-field findings; then the kind's Go
 * type (kinds/) checks it: a type error is the apiserver's 400 `<Kind> in version "v1" cannot be
 * handled as a <Kind>: json: cannot unmarshal …`; unknown and duplicate fields are refused
 * (fieldValidation=Strict), returned as warnings (Warn, the default) or dropped (Ignore).
 *
 * A new content type is one more `BodyDecoder` in `bodyDecoders` (protobuf of the built-in kinds is
 * one, decode-protobuf.ts).
 */
import { Effect, Either } from "effect"
import * as YAML from "yaml"
import {
  byBytes,
  goMarshalSorted,
  GoJsonSyntaxError,
  type JsonPath,
  parseGoJson,
  renderPath
} from "../../api/go-json.js"
import { BadRequest, type StatusError, UnsupportedMediaType } from "../../api/status.js"
import { decodeGo, type GoSchema } from "../kinds/go-types.js"
import type { Obj } from "../kinds/strategy.js"
import { protobufDecoder } from "./decode-protobuf.js"
import type { FieldValidation } from "./options.js"
import type { Warnings } from "./warnings.js"

export type { BodyDecoder, DecodedDocument } from "./body-decoder.js"
import type { BodyDecoder, DecodedDocument } from "./body-decoder.js"

const GVK_ERROR = "couldn't get version/kind; json parse error: "

export const jsonDecoder = {
  mediaTypes: ["application/json"],
  decode: (bytes: Uint8Array): Either.Either<DecodedDocument, string> => {
    const r = parseGoJson(bytes)
    if (r instanceof GoJsonSyntaxError) return Either.left(GVK_ERROR + r.message)
    return Either.right({
      value: r.value,
      strict: r.duplicates.map((d) => ({
        offset: d.offset,
        text: `duplicate field ${JSON.stringify(renderPath(d.path))}`
      })),
      offsets: r.offsets
    })
  }
} satisfies BodyDecoder

const yamlMessage = (e: YAML.YAMLError): string => {
  const line = e.linePos?.[0]?.line
  const text = e.message.split(" at line ")[0]!.split("\n")[0]!
  return `error converting YAML to JSON: yaml: ${line === undefined ? "" : `line ${line}: `}${text}`
}

/** go-yaml's duplicate-key errors: `line N: key "a" already set in map`. */
const yamlDuplicates = (node: unknown, lines: YAML.LineCounter, out: Array<string>): void => {
  if (YAML.isMap(node)) {
    const seen = new Set<string>()
    for (const item of node.items) {
      const k = YAML.isScalar(item.key) ? String(item.key.value) : JSON.stringify(item.key)
      if (seen.has(k) && YAML.isNode(item.key) && item.key.range !== undefined && item.key.range !== null) {
        out.push(`line ${lines.linePos(item.key.range[0]).line}: key ${JSON.stringify(k)} already set in map`)
      }
      seen.add(k)
      yamlDuplicates(item.value, lines, out)
    }
  } else if (YAML.isSeq(node)) {
    for (const item of node.items) yamlDuplicates(item, lines, out)
  }
}

export const yamlDecoder: BodyDecoder = {
  mediaTypes: ["application/yaml"],
  decode: (bytes) => {
    const lines = new YAML.LineCounter()
    const text = new TextDecoder().decode(bytes)
    const docs = YAML.parseAllDocuments(text, { version: "1.1", uniqueKeys: false, lineCounter: lines })
    const doc = Array.isArray(docs) ? docs[0] : undefined
    if (doc === undefined) return Either.right({ value: null, strict: [], offsets: new Map() })
    if (doc.errors.length > 0) return Either.left(yamlMessage(doc.errors[0]!))
    const dups: Array<string> = []
    yamlDuplicates(doc.contents, lines, dups)
    // sigs.k8s.io/yaml goes through a Go map: the JSON it decodes has sorted keys
    const json = Buffer.from(goMarshalSorted(doc.toJS({ maxAliasCount: 100 }) ?? null))
    const r = parseGoJson(json)
    if (r instanceof GoJsonSyntaxError) return Either.left(GVK_ERROR + r.message)
    return Either.right({
      value: r.value,
      strict: dups.length === 0 ? [] : [{ offset: -1, text: `yaml: unmarshal errors:\n  ${dups.join("\n  ")}` }],
      offsets: r.offsets
    })
  }
}

/** The decoders by content type; the first is the default for a request without one. */
export const bodyDecoders: ReadonlyArray<BodyDecoder> = [jsonDecoder, yamlDecoder, protobufDecoder]

export const mediaTypeOf = (contentType: string | undefined): string =>
  (contentType ?? "").split(";")[0]!.trim().toLowerCase()

/** NegotiateInputSerializer: 415 for a body of a type no decoder reads. */
export const decoderFor = (contentType: string | undefined): Effect.Effect<BodyDecoder, StatusError> => {
  const t = mediaTypeOf(contentType)
  const d = t === "" || t === "*/*" ? bodyDecoders[0] : bodyDecoders.find((x) => x.mediaTypes.includes(t))
  if (d !== undefined) return Effect.succeed(d)
  return Effect.fail(
    new UnsupportedMediaType({
      message: `the body of the request was in an unknown format - accepted media types include: ${bodyDecoders
        .flatMap((x) => x.mediaTypes)
        .join(", ")}`
    })
  )
}

/** summarizeData: the body's first 30 bytes for a message (hex unless it looks like a JSON object). */
export const summarizeData = (data: Uint8Array, max = 30): string => {
  if (data.length === 0) return "<empty>"
  const cut = data.length > max
  const head = data.subarray(0, max)
  if (data[0] === 0x7b) return new TextDecoder().decode(head) + (cut ? " ..." : "")
  return Buffer.from(head).toString("hex") + (cut ? " ..." : "")
}

/** What the type stage found: the typed object and the strict violations in document order. */
export interface Typed {
  readonly object: Obj
  readonly strict: ReadonlyArray<string>
}

/**
 * The document against the kind's Go type: the first type error in document order (Go's decoder
 * keeps the first), or the typed object with every strict violation in document order.
 */
export const typeCheck = (
  schema: GoSchema,
  doc: DecodedDocument,
  coerce?: (obj: Obj) => ReadonlyArray<string>
): Either.Either<Typed, string> => {
  const r = decodeGo(schema, doc.value)
  const at = (p: JsonPath) => doc.offsets.get(renderPath(p)) ?? Number.MAX_SAFE_INTEGER
  if (Either.isLeft(r)) {
    const first = [...r.left].sort((a, b) => at(a.path) - at(b.path))[0]!
    return Either.left(first.message)
  }
  const strict = [
    ...doc.strict,
    ...r.right.unknown.map((p) => ({ offset: at(p), text: `unknown field ${JSON.stringify(renderPath(p))}` }))
  ]
    .sort((a, b) => a.offset - b.offset || byBytes(a.text, b.text))
    .map((v) => v.text)
  const object = r.right.value as Obj
  // Go's zero ObjectMeta when the body has none
  if (object.metadata === undefined) object.metadata = {}
  // a custom resource's pruned fields come after the decoder's own findings (schemaCoercingDecoder)
  const pruned = coerce?.(object) ?? []
  return Either.right({
    object,
    strict: [...strict, ...pruned.map((p) => `unknown field ${JSON.stringify(p)}`)]
  })
}

/** strict decoding error: a, b */
export const strictText = (violations: ReadonlyArray<string>): string =>
  `strict decoding error: ${violations.join(", ")}`

/** addStrictDecodingWarnings: one warning per violation, a YAML error split per line. */
export const warnStrict = (warnings: Warnings, violations: ReadonlyArray<string>): void => {
  for (const v of violations) {
    const yaml = /^(?:error converting YAML to JSON: )?yaml: unmarshal errors:\n/.exec(v)
    if (yaml === null) warnings.add(v)
    else for (const line of v.slice(yaml[0].length).split("\n")) warnings.add(line.trim())
  }
}

export interface BodyContext {
  /** the URL's kind and version ("ConfigMap", "v1"): the decode errors name them */
  readonly kind: string
  readonly version: string
  /** the URL's apiVersion ("v1", "coordination.k8s.io/v1") */
  readonly apiVersion: string
  /** a custom resource's endpoint */
  readonly custom: boolean
  readonly schema: GoSchema
  /** the strategy's schema coercion (a custom resource's pruning) */
  readonly coerce?: ((obj: Obj) => ReadonlyArray<string>) | undefined
  readonly fieldValidation: FieldValidation
  readonly warnings: Warnings
}

/** the body's apiVersion/kind read first (json.Unmarshal into a struct of the two strings) */
const interpret = (doc: unknown): Either.Either<{ kind: string; version: string }, string> => {
  if (doc === null) return Either.right({ kind: "", version: "" })
  if (typeof doc !== "object" || Array.isArray(doc)) {
    const kind = Array.isArray(doc)
      ? "array"
      : typeof doc === "string"
        ? "string"
        : typeof doc === "boolean"
          ? "bool"
          : "number"
    return Either.left(
      `${GVK_ERROR}json: cannot unmarshal ${kind} into Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }`
    )
  }
  const d = doc as Record<string, unknown>
  for (const f of ["apiVersion", "kind"] as const) {
    const v = d[f]
    if (v !== undefined && v !== null && typeof v !== "string") {
      const kind = Array.isArray(v)
        ? "array"
        : typeof v === "object"
          ? "object"
          : typeof v === "boolean"
            ? "bool"
            : "number"
      return Either.left(`${GVK_ERROR}json: cannot unmarshal ${kind} into Go struct field .${f} of type string`)
    }
  }
  const apiVersion = typeof d["apiVersion"] === "string" ? d["apiVersion"] : ""
  const parts = apiVersion.split("/")
  if (parts.length > 2) return Either.left(`unexpected GroupVersion string: ${apiVersion}`)
  return Either.right({ kind: typeof d["kind"] === "string" ? d["kind"] : "", version: parts[parts.length - 1]! })
}

/**
 * A create or update body: the decoder by content type, the kind's Go type, fieldValidation.
 * The 400s carry the apiserver's texts (transformDecodeError).
 */
export const decodeBody = (decoder: BodyDecoder, bytes: Uint8Array, c: BodyContext): Effect.Effect<Obj, StatusError> =>
  Effect.suspend(() => {
    const unrecognized = (err: string) =>
      Effect.fail(
        new BadRequest({
          message: `the object provided is unrecognized (must be of type ${c.kind}): ${err} (${summarizeData(bytes)})`
        })
      )
    const doc = decoder.decode(bytes, { apiVersion: c.apiVersion, kind: c.kind, custom: c.custom })
    if (Either.isLeft(doc)) {
      const e = doc.left
      if (typeof e === "string") return unrecognized(e)
      const version = e.gvk.apiVersion.split("/").pop()!
      return Effect.fail(
        new BadRequest({
          message: `${e.gvk.kind} in version ${JSON.stringify(version)} cannot be handled as a ${c.kind}: ${e.message}`
        })
      )
    }
    const gvk = interpret(doc.right.value)
    if (Either.isLeft(gvk)) return unrecognized(gvk.left)
    const kind = gvk.right.kind === "" ? c.kind : gvk.right.kind
    const version = gvk.right.version === "" ? c.version : gvk.right.version
    const cannot = (err: string) =>
      Effect.fail(
        new BadRequest({
          message: `${kind} in version ${JSON.stringify(version)} cannot be handled as a ${c.kind}: ${err}`
        })
      )
    const typed = typeCheck(c.schema, { ...doc.right, value: doc.right.value ?? {} }, c.coerce)
    if (Either.isLeft(typed)) return cannot(typed.left)
    const strict = typed.right.strict
    if (strict.length > 0 && c.fieldValidation === "Strict") return cannot(strictText(strict))
    if (strict.length > 0 && c.fieldValidation === "Warn") warnStrict(c.warnings, strict)
    return Effect.succeed(typed.right.object)
  })
