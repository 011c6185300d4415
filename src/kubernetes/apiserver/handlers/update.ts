/**
 * endpoints/handlers/update.go + the generic registry's Update: PUT replaces the object through
 * GuaranteedUpdate. A resourceVersion in the body must be the stored one (409 Conflict otherwise);
 * none means an unconditional update. A missing object is 404 (no create-on-update here).
 */
import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect } from "effect"
import { groupResourceOf } from "../resources.js"
import { newConflict, type StatusError } from "../../api/status.js"
import { readJsonObject } from "../body.js"
import { prepareUpdate } from "../object-rest.js"
import { objectResponse } from "./output.js"
import { objectKey, type RequestScope } from "./scope.js"

export const OPTIMISTIC_LOCK_ERROR =
  "the object has been modified; please apply your changes to the latest version and try again"

export const update = (
  s: RequestScope,
  name: string
): Effect.Effect<HttpServerResponse.HttpServerResponse, StatusError> =>
  Effect.gen(function* () {
    const body = yield* readJsonObject(s.request)
    const meta = body["metadata"] as Record<string, unknown> | undefined
    const rv = typeof meta?.["resourceVersion"] === "string" ? meta["resourceVersion"] : ""
    const stored = yield* s.served.storage.guaranteedUpdate(objectKey(s, name), {
      tryUpdate: (current) =>
        Effect.gen(function* () {
          if (rv !== "" && rv !== current.metadata.resourceVersion) {
            return yield* Effect.fail(newConflict(groupResourceOf(s.info), name, OPTIMISTIC_LOCK_ERROR))
          }
          const copy = structuredClone(body)
          return { object: yield* prepareUpdate(s.info, s.apiVersion, s.namespace, name, current, copy) }
        })
    })
    return objectResponse(s, stored)
  })
