/**
 * registry/rest's BeforeCreate / BeforeUpdate for schema-less objects: the body must be of the
 * URL's kind and version and namespace; names are validated by the resource's rule; create fills
 * in uid, creationTimestamp, generation and a generated name; update keeps what clients may not
 * change and bumps the generation when the object's non-metadata, non-status content changes.
 */
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import type { KubeObject } from "../api/object-meta.js"
import { BadRequest, type FieldError, newInvalid, type StatusError } from "../api/status.js"
import type { ResourceInfo } from "./resources.js"

/** names.SimpleNameGenerator: 5 characters from an alphabet without vowels or look-alikes. */
const ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
export const generateName = (base: string): string => {
  const b = base.length > 58 ? base.slice(0, 58) : base
  let suffix = ""
  for (let i = 0; i < 5; i++) suffix += ALPHABET[Math.floor(Math.random() * ALPHABET.length)]
  return b + suffix
}

/** metav1.Time's RFC 3339 form in seconds. */
export const timestamp = (ms = Date.now()): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z")

const invalid = (info: ResourceInfo, name: string, errors: ReadonlyArray<FieldError>) =>
  newInvalid({ group: info.group, kind: info.kind }, name, errors)

/**
 * The body's TypeMeta against the URL: unset kind/apiVersion default to the URL's; others are
 * refused with the apiserver's 400.
 */
export const checkTypeMeta = (
  info: ResourceInfo,
  apiVersion: string,
  body: Record<string, unknown>
): Effect.Effect<void, BadRequest> => {
  const v = body["apiVersion"]
  const k = body["kind"]
  if (v !== undefined && typeof v !== "string")
    return Effect.fail(new BadRequest({ message: "apiVersion must be a string" }))
  if (k !== undefined && typeof k !== "string") return Effect.fail(new BadRequest({ message: "kind must be a string" }))
  if (v !== undefined && v !== "" && v !== apiVersion) {
    return Effect.fail(
      new BadRequest({
        message: `the API version in the data (${v}) does not match the expected API version (${apiVersion})`
      })
    )
  }
  if (k !== undefined && k !== "" && k !== info.kind) {
    return Effect.fail(
      new BadRequest({ message: `the kind in the data (${k}) does not match the expected kind (${info.kind})` })
    )
  }
  body["apiVersion"] = apiVersion
  body["kind"] = info.kind
  return Effect.void
}

const metadataOf = (body: Record<string, unknown>): Effect.Effect<Record<string, unknown>, BadRequest> => {
  const m = body["metadata"] ?? {}
  if (typeof m !== "object" || m === null || Array.isArray(m)) {
    return Effect.fail(new BadRequest({ message: "metadata must be an object" }))
  }
  return Effect.succeed(m as Record<string, unknown>)
}

/** EnsureObjectNamespaceMatchesRequestNamespace. */
const checkNamespace = (
  info: ResourceInfo,
  namespace: string | undefined,
  meta: Record<string, unknown>
): Effect.Effect<void, BadRequest> => {
  const ns = meta["namespace"]
  if (!info.namespaced) {
    delete meta["namespace"]
    return Effect.void
  }
  if (ns !== undefined && ns !== "" && ns !== namespace) {
    return Effect.fail(
      new BadRequest({
        message: "the namespace of the provided object does not match the namespace sent on the request"
      })
    )
  }
  meta["namespace"] = namespace
  return Effect.void
}

const nameErrors = (info: ResourceInfo, name: string): Array<FieldError> =>
  info.validateName(name).map((msg) => ({
    type: "FieldValueInvalid",
    field: "metadata.name",
    message: `Invalid value: ${JSON.stringify(name)}: ${msg}`
  }))

const checkMetaTypes = (
  info: ResourceInfo,
  name: string,
  obj: Record<string, unknown>
): Effect.Effect<KubeObject, StatusError> => {
  const meta = obj["metadata"] as Record<string, unknown>
  const errs: Array<FieldError> = [...(info.validate?.(obj) ?? [])]
  for (const f of ["labels", "annotations"] as const) {
    const m = meta[f]
    if (m === undefined || m === null) continue
    if (typeof m !== "object" || Array.isArray(m) || Object.values(m).some((v) => typeof v !== "string")) {
      errs.push({
        type: "FieldValueInvalid",
        field: `metadata.${f}`,
        message: "Invalid value: must be a map of strings"
      })
    }
  }
  if (errs.length > 0) return Effect.fail(invalid(info, name, errs))
  // TypeMeta first, as the apiserver writes objects
  const { apiVersion, kind, metadata, ...rest } = obj
  return Effect.succeed({ apiVersion, kind, metadata, ...rest } as unknown as KubeObject)
}

/** A body's kind/apiVersion and namespace checked against the URL; its metadata (made an object). */
const bodyMeta = (
  info: ResourceInfo,
  apiVersion: string,
  namespace: string | undefined,
  body: Record<string, unknown>
) =>
  Effect.gen(function* () {
    yield* checkTypeMeta(info, apiVersion, body)
    const meta = yield* metadataOf(body)
    body["metadata"] = meta
    yield* checkNamespace(info, namespace, meta)
    return meta
  })

/** BeforeCreate: the object to store for a POST body. */
export const prepareCreate = (
  info: ResourceInfo,
  apiVersion: string,
  namespace: string | undefined,
  body: Record<string, unknown>
): Effect.Effect<KubeObject, StatusError> =>
  Effect.gen(function* () {
    const meta = yield* bodyMeta(info, apiVersion, namespace, body)
    let name = typeof meta["name"] === "string" ? meta["name"] : ""
    const gen = typeof meta["generateName"] === "string" ? meta["generateName"] : ""
    if (name === "" && gen !== "") {
      name = generateName(gen)
      meta["name"] = name
    }
    if (name === "") {
      return yield* Effect.fail(
        invalid(info, "", [
          {
            type: "FieldValueRequired",
            field: "metadata.name",
            message: "Required value: name or generateName is required"
          }
        ])
      )
    }
    const errs = nameErrors(info, name)
    if (errs.length > 0) return yield* Effect.fail(invalid(info, name, errs))
    meta["uid"] = randomUUID()
    meta["creationTimestamp"] = timestamp()
    delete meta["deletionTimestamp"]
    delete meta["deletionGracePeriodSeconds"]
    if (info.generation) meta["generation"] = 1
    else delete meta["generation"]
    info.prepareForCreate?.(body)
    return yield* checkMetaTypes(info, name, body)
  })

const specJson = (o: Record<string, unknown>): string => {
  const { metadata: _m, status: _s, ...rest } = o
  return JSON.stringify(rest)
}

/**
 * BeforeUpdate: the object to store in place of `current` for a PUT body (or a patched copy):
 * name and namespace as in the URL, uid/creationTimestamp/deletionTimestamp kept, generation
 * bumped on a spec change.
 */
export const prepareUpdate = (
  info: ResourceInfo,
  apiVersion: string,
  namespace: string | undefined,
  name: string,
  current: KubeObject,
  body: Record<string, unknown>
): Effect.Effect<KubeObject, StatusError> =>
  Effect.gen(function* () {
    const meta = yield* bodyMeta(info, apiVersion, namespace, body)
    const bodyName = meta["name"]
    if (bodyName !== undefined && bodyName !== "" && bodyName !== name) {
      return yield* Effect.fail(
        new BadRequest({
          message: `the name of the object (${String(bodyName)}) does not match the name on the URL (${name})`
        })
      )
    }
    meta["name"] = name
    const cur = current.metadata
    meta["uid"] = cur.uid
    meta["creationTimestamp"] = cur.creationTimestamp
    if (cur.deletionTimestamp !== undefined) meta["deletionTimestamp"] = cur.deletionTimestamp
    else delete meta["deletionTimestamp"]
    if (info.generation) {
      const g = cur.generation ?? 1
      meta["generation"] = specJson(body) === specJson(current as Record<string, unknown>) ? g : g + 1
    } else {
      delete meta["generation"]
    }
    info.prepareForUpdate?.(body)
    return yield* checkMetaTypes(info, name, body)
  })
