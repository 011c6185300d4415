/**
 * endpoints/handlers/patch.go: JSON patch (RFC 6902, fast-json-patch), JSON merge patch (RFC
 * 7386, json-merge-patch) and, for the built-in types, strategic merge patch (the merge patch
 * with ObjectMeta's merge lists: finalizers as a set, ownerReferences by uid, and the
 * `$deleteFromPrimitiveList/finalizers` directive — enough for `kubectl apply`). The patch is
 * applied to the current object inside the Store's update, so a conflict retries with the fresh
 * object; the patched object is decoded with the kind's Go type (a type error or, with
 * fieldValidation=Strict, an unknown field is the apiserver's 422 on `patch`) and then goes
 * through the same stages as a PUT.
 */
import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect, Either } from "effect"
import * as JsonPatch from "fast-json-patch"
import * as MergePatch from "json-merge-patch"
import { goJsonError, GoJsonSyntaxError, parseGoJson, renderPath } from "../../api/go-json.js"
import type { KubeObject } from "../../api/object-meta.js"
import { BadRequest, Invalid, type StatusError, UnsupportedMediaType } from "../../api/status.js"
import { readBody } from "../body.js"
import { patchOptions } from "../write/options.js"
import { defaulted, update as storeUpdate } from "../write/store.js"
import { serverSideApply } from "./apply.js"
import { decodePatched, type Patched, type PatchType } from "./decode-patched.js"
import { trackManagedFields } from "./field-manager.js"
import { objectResponse } from "./output.js"
import { type RequestScope, writeContext } from "./scope.js"

export type { PatchType }

const patchTypeOf = (contentType: string | undefined, strategic: boolean): PatchType | undefined => {
  const t = (contentType ?? "").split(";")[0]!.trim().toLowerCase()
  if (t === "application/json-patch+json") return "json"
  if (t === "application/merge-patch+json") return "merge"
  if (t === "application/strategic-merge-patch+json" && strategic) return "strategic"
  if (t === "application/apply-patch+yaml") return "apply"
  return undefined
}

/** The PATCH bodies a resource accepts (strategic merge for built-in kinds; apply); /openapi lists them too. */
export const patchMediaTypes = (strategic: boolean): ReadonlyArray<string> => [
  "application/json-patch+json",
  "application/merge-patch+json",
  ...(strategic ? ["application/strategic-merge-patch+json"] : []),
  "application/apply-patch+yaml"
]

const unsupported = (strategic: boolean) =>
  new UnsupportedMediaType({
    message: `the body of the request was in an unknown format - accepted media types include: ${patchMediaTypes(
      strategic
    ).join(", ")}`
  })

const JSON_PATCH_OP_FIELDS = ["op", "path", "from", "value"]

/** kjson.UnmarshalStrict of a JSON patch into []jsonPatchOp: its unknown and duplicate fields. */
const jsonPatchStrict = (bytes: Uint8Array): Either.Either<Array<string>, StatusError> => {
  const r = parseGoJson(bytes)
  if (r instanceof GoJsonSyntaxError)
    return Either.left(new BadRequest({ message: `error decoding patch: ${r.message}` }))
  if (!Array.isArray(r.value)) return Either.right([])
  const out = r.duplicates.map((d) => `json patch duplicate field ${JSON.stringify(renderPath(d.path))}`)
  r.value.forEach((op, i) => {
    if (typeof op !== "object" || op === null || Array.isArray(op)) return
    for (const k of Object.keys(op))
      if (!JSON_PATCH_OP_FIELDS.includes(k)) out.push(`json patch unknown field ${JSON.stringify(`[${i}].${k}`)}`)
  })
  return Either.right(out)
}

/** ObjectMeta's strategic-merge lists, on top of the merge patch. */
const strategicMerge = (current: Record<string, unknown>, patch: Record<string, unknown>): unknown => {
  const pm = (patch["metadata"] ?? undefined) as Record<string, unknown> | undefined
  const cm = (current["metadata"] ?? {}) as Record<string, unknown>
  const strip = (u: unknown): unknown => {
    if (Array.isArray(u)) return u.map(strip)
    if (u === null || typeof u !== "object") return u
    const o: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(u)) if (!k.startsWith("$")) o[k] = strip(v)
    return o
  }
  const merged = MergePatch.apply(structuredClone(current), strip(patch)) as Record<string, unknown>
  if (pm === undefined || typeof pm !== "object") return merged
  const meta = (merged["metadata"] ?? {}) as Record<string, unknown>
  if (Array.isArray(pm["finalizers"]) || Array.isArray(pm["$deleteFromPrimitiveList/finalizers"])) {
    const base = Array.isArray(cm["finalizers"]) ? [...(cm["finalizers"] as Array<unknown>)] : []
    for (const f of (pm["finalizers"] as Array<unknown> | undefined) ?? []) if (!base.includes(f)) base.push(f)
    const del = (pm["$deleteFromPrimitiveList/finalizers"] as Array<unknown> | undefined) ?? []
    const fins = base.filter((f) => !del.includes(f))
    if (fins.length === 0) delete meta["finalizers"]
    else meta["finalizers"] = fins
  }
  if (Array.isArray(pm["ownerReferences"])) {
    const base = Array.isArray(cm["ownerReferences"])
      ? [...(cm["ownerReferences"] as Array<Record<string, unknown>>)]
      : []
    for (const ref of pm["ownerReferences"] as Array<Record<string, unknown>>) {
      const i = base.findIndex((b) => b["uid"] === ref["uid"])
      if (ref["$patch"] === "delete") {
        if (i >= 0) base.splice(i, 1)
      } else if (i >= 0) base[i] = MergePatch.apply(base[i], strip(ref)) as Record<string, unknown>
      else base.push(strip(ref) as Record<string, unknown>)
    }
    meta["ownerReferences"] = base
  }
  merged["metadata"] = meta
  return merged
}

/** The patched copy of `current` as JSON, or the apiserver's 400/422 for a patch that does not apply. */
export const applyPatch = (type: PatchType, current: KubeObject, patch: unknown): Effect.Effect<unknown, StatusError> =>
  Effect.suspend((): Effect.Effect<unknown, StatusError> => {
    const doc = structuredClone(current) as Record<string, unknown>
    if (type === "json") {
      if (!Array.isArray(patch)) {
        return Effect.fail(
          new BadRequest({ message: "json: cannot unmarshal object into Go value of type jsonpatch.Patch" })
        )
      }
      const err = JsonPatch.validate(patch as Array<JsonPatch.Operation>, doc)
      if (err !== undefined) {
        return Effect.fail(
          new Invalid({
            message: `the server rejected our request due to an error in our request: ${err.message.split("\n")[0]}`
          })
        )
      }
      return Effect.succeed(
        JsonPatch.applyPatch(doc, patch as Array<JsonPatch.Operation>, false, true).newDocument as unknown
      )
    }
    if (typeof patch !== "object" || patch === null || Array.isArray(patch)) {
      return Effect.fail(
        new BadRequest({
          message: `json: cannot unmarshal ${Array.isArray(patch) ? "array" : "string"} into Go value of type map[string]interface {}`
        })
      )
    }
    if (type === "strategic") return Effect.succeed(strategicMerge(doc, patch as Record<string, unknown>))
    return Effect.succeed(MergePatch.apply(doc, patch) as unknown)
  })

export const patch = (
  s: RequestScope,
  name: string
): Effect.Effect<HttpServerResponse.HttpServerResponse, StatusError> =>
  Effect.gen(function* () {
    const type = patchTypeOf(s.request.headers["content-type"], s.info.strategicMergePatch)
    if (type === undefined) return yield* Effect.fail(unsupported(s.info.strategicMergePatch))
    const bytes = yield* readBody(s.request)
    if (type === "apply") return yield* serverSideApply(s, name, bytes)
    const options = yield* patchOptions(s.url.searchParams)
    if (goJsonError(bytes) !== undefined) return yield* Effect.fail(new BadRequest({ message: "invalid JSON patch" }))
    const parsed = parseGoJson(bytes) as Exclude<ReturnType<typeof parseGoJson>, GoJsonSyntaxError>
    const checkStrict = options.fieldValidation !== "Ignore"
    let strict: Array<string> = []
    if (checkStrict && type === "json") strict = yield* jsonPatchStrict(bytes)
    else if (checkStrict) strict = parsed.duplicates.map((d) => `duplicate field ${JSON.stringify(renderPath(d.path))}`)
    const p: Patched = { type, patch: parsed.value, strict }
    const ctx = writeContext(s, options.dryRun)
    const stored = yield* storeUpdate(ctx, name, (current) =>
      Effect.gen(function* () {
        const patched = yield* applyPatch(type, current, p.patch)
        // a patched copy is decoded afresh: its warnings are the last attempt's
        const obj = yield* decodePatched(s, p, patched, options.fieldValidation, s.warnings)
        return trackManagedFields(s, options.fieldManager, current, yield* defaulted(ctx, "UPDATE", obj))
      })
    )
    return yield* objectResponse(s, stored)
  })
