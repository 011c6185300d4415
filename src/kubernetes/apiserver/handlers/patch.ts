/**
 * endpoints/handlers/patch.go: JSON patch (RFC 6902, fast-json-patch), JSON merge patch (RFC 7386,
 * json-merge-patch) and, for the built-in types, strategic merge patch — which for ConfigMap,
 * Secret and Namespace (no list merge keys) is the merge patch, enough for client-side
 * `kubectl apply`. The patch is applied to the current object inside GuaranteedUpdate, so a
 * conflict retries with the fresh object; the result goes through BeforeUpdate like a PUT.
 */
import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect } from "effect"
import * as JsonPatch from "fast-json-patch"
import * as MergePatch from "json-merge-patch"
import type { KubeObject } from "../../api/object-meta.js"
import { BadRequest, Invalid, newConflict, type StatusError, UnsupportedMediaType } from "../../api/status.js"
import { parseJson, readBody } from "../body.js"
import { prepareUpdate } from "../object-rest.js"
import { groupResourceOf } from "../resources.js"
import { objectResponse } from "./output.js"
import { OPTIMISTIC_LOCK_ERROR } from "./update.js"
import { objectKey, type RequestScope } from "./scope.js"

export type PatchType = "json" | "merge" | "strategic"

const patchTypeOf = (contentType: string | undefined, strategic: boolean): PatchType | undefined => {
  const t = (contentType ?? "").split(";")[0]!.trim().toLowerCase()
  if (t === "application/json-patch+json") return "json"
  if (t === "application/merge-patch+json") return "merge"
  if (t === "application/strategic-merge-patch+json" && strategic) return "strategic"
  return undefined
}

const unsupported = (strategic: boolean) =>
  new UnsupportedMediaType({
    message: `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json${
      strategic ? ", application/strategic-merge-patch+json" : ""
    }`
  })

/** The patched copy of `current`, or the apiserver's 400/422 for a patch that does not apply. */
export const applyPatch = (
  type: PatchType,
  current: KubeObject,
  patch: unknown
): Effect.Effect<Record<string, unknown>, StatusError> =>
  Effect.suspend((): Effect.Effect<Record<string, unknown>, StatusError> => {
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
      const result = JsonPatch.applyPatch(doc, patch as Array<JsonPatch.Operation>, false, true).newDocument as unknown
      if (typeof result !== "object" || result === null || Array.isArray(result)) {
        return Effect.fail(new BadRequest({ message: "the patched object is not a JSON object" }))
      }
      return Effect.succeed(result as Record<string, unknown>)
    }
    if (typeof patch !== "object" || patch === null || Array.isArray(patch)) {
      return Effect.fail(
        new BadRequest({ message: "json: cannot unmarshal array into Go value of type map[string]interface {}" })
      )
    }
    const result = MergePatch.apply(doc, patch) as unknown
    return Effect.succeed(result as Record<string, unknown>)
  })

export const patch = (
  s: RequestScope,
  name: string
): Effect.Effect<HttpServerResponse.HttpServerResponse, StatusError> =>
  Effect.gen(function* () {
    const type = patchTypeOf(s.request.headers["content-type"], s.info.strategicMergePatch)
    if (type === undefined) return yield* Effect.fail(unsupported(s.info.strategicMergePatch))
    const p = yield* Effect.flatMap(readBody(s.request), parseJson)
    const stored = yield* s.served.storage.guaranteedUpdate(objectKey(s, name), {
      tryUpdate: (current) =>
        Effect.gen(function* () {
          const patched = yield* applyPatch(type, current, p)
          const meta = patched["metadata"] as Record<string, unknown> | undefined
          // a patch that sets metadata.resourceVersion is a precondition (optimistic lock)
          const rv = typeof meta?.["resourceVersion"] === "string" ? meta["resourceVersion"] : ""
          if (rv !== "" && rv !== current.metadata.resourceVersion) {
            return yield* Effect.fail(newConflict(groupResourceOf(s.info), name, OPTIMISTIC_LOCK_ERROR))
          }
          return { object: yield* prepareUpdate(s.info, s.apiVersion, s.namespace, name, current, patched) }
        })
    })
    return objectResponse(s, stored)
  })
