/**
 * endpoints/handlers/update.go: the write pipeline for a PUT — UpdateOptions, the decoder by
 * content type, decode and type check, the body against the URL (kind, namespace, name), then
 * the Store's update inside GuaranteedUpdate: a resourceVersion in the body must be the stored
 * one (409), none is an unconditional update. Also the namespaces/{name}/status and /finalize
 * subresources (their strategies keep what they may not change).
 */
import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect } from "effect"
import type { StatusError } from "../../api/status.js"
import { readBody } from "../body.js"
import type { Obj } from "../kinds/strategy.js"
import { decoderFor } from "../write/decode.js"
import { checkName } from "../write/object-checks.js"
import { updateOptions } from "../write/options.js"
import { defaulted, update as storeUpdate } from "../write/store.js"
import { decodeRequestObject } from "./decode-object.js"
import { trackManagedFields } from "./field-manager.js"
import { objectResponse } from "./output.js"
import { type RequestScope, writeContext } from "./scope.js"

export const update = (
  s: RequestScope,
  name: string
): Effect.Effect<HttpServerResponse.HttpServerResponse, StatusError> =>
  Effect.gen(function* () {
    const bytes = yield* readBody(s.request)
    const options = yield* updateOptions(s.url.searchParams)
    const decoder = yield* decoderFor(s.request.headers["content-type"])
    const ctx = writeContext(s, options.dryRun)
    const obj = yield* decodeRequestObject(s, ctx, decoder, bytes, options)
    yield* checkName(obj, name)
    const body = yield* defaulted(ctx, "UPDATE", obj)
    const stored = yield* storeUpdate(ctx, name, (current) =>
      Effect.sync(() => trackManagedFields(s, options.fieldManager, current, structuredClone(body) as Obj))
    )
    return yield* objectResponse(s, stored)
  })
