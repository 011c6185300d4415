/**
 * endpoints/handlers/negotiation: what the Accept header asks for — JSON or YAML, and the
 * object itself, a Table, or PartialObjectMetadata(List) (`;as=…;g=meta.k8s.io;v=v1`), the
 * clauses tried by quality, then in order. Nothing acceptable is the 406. A watch streams JSON or
 * protobuf (YAML has no stream framing). The representation is applied to what is sent with the
 * apiserver's 406 when an object is asked for as a list or the other way round. Protobuf is served
 * for the kinds with a message (src/kubernetes/api/protobuf/messages.ts).
 */
import { Either } from "effect"
import * as YAML from "yaml"
import type { KubeList, KubeObject } from "../api/object-meta.js"
import { NotAcceptable } from "../api/status.js"
import type { ResourceInfo } from "./resources.js"

export type Representation = "Object" | "Table" | "PartialObjectMetadata" | "PartialObjectMetadataList"

export interface OutputMedia {
  readonly yaml: boolean
  /** application/vnd.kubernetes.protobuf (the `k8s\0` envelope; watches: length-prefixed WatchEvents) */
  readonly protobuf: boolean
  readonly as: Representation
  /** meta.k8s.io/v1 or meta.k8s.io/v1beta1 for the converted kinds */
  readonly metaVersion: string
}

export const JSON_MEDIA: OutputMedia = { yaml: false, protobuf: false, as: "Object", metaVersion: "meta.k8s.io/v1" }

interface Clause {
  readonly type: string
  readonly params: Readonly<Record<string, string>>
  readonly q: number
}

const parseAccept = (accept: string): Array<Clause> =>
  accept
    .split(",")
    .map((part, i) => {
      const [mt, ...ps] = part.split(";").map((s) => s.trim())
      const params: Record<string, string> = {}
      for (const p of ps) {
        const eq = p.indexOf("=")
        if (eq > 0) params[p.slice(0, eq).trim().toLowerCase()] = p.slice(eq + 1).trim()
      }
      const q = params["q"] === undefined ? 1 : Number(params["q"])
      return { type: (mt ?? "").toLowerCase(), params, q: Number.isNaN(q) ? 0 : q, i }
    })
    .filter((c) => c.type !== "" && c.q > 0)
    .sort((a, b) => b.q - a.q || a.i - b.i)

const conversion = (
  params: Readonly<Record<string, string>>
): { as: Representation; metaVersion: string } | undefined => {
  const as = params["as"]
  if (as === undefined) return { as: "Object", metaVersion: "meta.k8s.io/v1" }
  if (params["g"] !== "meta.k8s.io" || (params["v"] !== "v1" && params["v"] !== "v1beta1")) return undefined
  if (as !== "Table" && as !== "PartialObjectMetadata" && as !== "PartialObjectMetadataList") return undefined
  return { as, metaVersion: `meta.k8s.io/${params["v"]}` }
}

const MEDIA_TYPES = "application/json, application/yaml, application/vnd.kubernetes.protobuf"
const STREAM_MEDIA_TYPES = "application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch"

const notAcceptableList = (list: string) =>
  new NotAcceptable({ message: `only the following media types are accepted: ${list}` })

/**
 * NegotiateOutputMediaType (and, for a watch, NegotiateOutputMediaTypeStream): the first clause a
 * serializer takes — JSON, YAML, protobuf in the server's order (a wildcard is JSON). Protobuf is
 * taken for the object itself only where the kind has a message (`protobufObjects`: the built-in
 * kinds; a custom resource's StandardSerializers leave it out, so `application/json` after it
 * wins and protobuf alone is the 406), and for PartialObjectMetadata(List) everywhere; a Table is
 * JSON or YAML. YAML cannot stream: a watch that gets it is the 406 with the stream types.
 */
export const negotiateOutput = (
  accept: string | undefined,
  watch: boolean,
  protobufObjects = false
): Either.Either<OutputMedia, NotAcceptable> => {
  if (accept === undefined || accept.trim() === "") return Either.right(JSON_MEDIA)
  for (const c of parseAccept(accept)) {
    const [type, subtype] = c.type.split("/")
    if (type !== "application" && type !== "*") continue
    const json = subtype === "json" || subtype === "*" || type === "*"
    const yaml = subtype === "yaml"
    const protobuf = subtype === "vnd.kubernetes.protobuf"
    if (!json && !yaml && !protobuf) continue
    if (c.params["stream"] !== undefined && (c.params["stream"] !== "watch" || !watch)) continue
    const conv = conversion(c.params)
    if (conv === undefined) continue
    if (protobuf && (conv.as === "Table" || (conv.as === "Object" && !protobufObjects))) continue
    if (watch && yaml && !json) return Either.left(notAcceptableList(STREAM_MEDIA_TYPES))
    return Either.right({ yaml: yaml && !json, protobuf: protobuf && !json, ...conv })
  }
  return Either.left(notAcceptableList(MEDIA_TYPES))
}

/**
 * ErrorNegotiated: the media type of an error's Status — the first clause a serializer takes with
 * no conversion asked for (DefaultEndpointRestrictions); JSON when none does.
 */
export const errorMedia = (accept: string | undefined): OutputMedia => {
  if (accept === undefined) return JSON_MEDIA
  for (const c of parseAccept(accept)) {
    if (c.params["as"] !== undefined) continue
    const r = negotiateOutput(c.type, false, true)
    if (Either.isRight(r)) return r.right
  }
  return JSON_MEDIA
}

/** Go's %T of what the registry returns for the resource (internal types; CRs are unstructured). */
const goTypeName = (info: ResourceInfo, list: boolean): string => {
  if (info.custom) return list ? "*unstructured.UnstructuredList" : "*unstructured.Unstructured"
  const pkg = info.group === "" ? "core" : info.group.split(".")[0]!
  return `*${pkg}.${info.kind}${list ? "List" : ""}`
}

const notAcceptable = (message: string) => new NotAcceptable({ message })

/** meta.AsPartialObjectMetadata */
export const partialObjectMetadata = (obj: KubeObject, metaVersion: string): KubeObject => ({
  kind: "PartialObjectMetadata",
  apiVersion: metaVersion,
  metadata: obj.metadata
})

/** The representation of one object; a list representation of an object is the 406. */
export const asObjectRepresentation = (
  info: ResourceInfo,
  media: OutputMedia,
  obj: KubeObject
): Either.Either<KubeObject, NotAcceptable> => {
  switch (media.as) {
    case "PartialObjectMetadata":
      return Either.right(partialObjectMetadata(obj, media.metaVersion))
    case "PartialObjectMetadataList":
      return Either.left(
        notAcceptable(
          `you requested PartialObjectMetadataList, but the requested object is not a list (${goTypeName(info, false)})`
        )
      )
    default:
      return Either.right(obj)
  }
}

/** The representation of a list; an object representation of a list is the 406. */
export const asListRepresentation = (
  info: ResourceInfo,
  media: OutputMedia,
  list: KubeList
): Either.Either<KubeList | undefined, NotAcceptable> => {
  switch (media.as) {
    case "PartialObjectMetadata":
      return Either.left(
        notAcceptable(
          `you requested PartialObjectMetadata, but the requested object is a list (${goTypeName(info, true)})`
        )
      )
    case "PartialObjectMetadataList":
      return Either.right({
        kind: "PartialObjectMetadataList",
        apiVersion: media.metaVersion,
        metadata: list.metadata,
        items: list.items.map((i) => partialObjectMetadata(i, media.metaVersion))
      })
    default:
      return Either.right(undefined)
  }
}

export const YAML_TYPE = "application/yaml"

/** A JSON text as YAML (sigs.k8s.io/yaml's JSONToYAML: keys sorted). */
export const jsonToYaml = (json: string): string =>
  YAML.stringify(JSON.parse(json), { sortMapEntries: true, lineWidth: 0, version: "1.1" })
