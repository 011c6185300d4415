/**
 * endpoints/handlers/create.go: the write pipeline for a POST — the input decoder by content
 * type (415), the body (413 past 3 MiB), CreateOptions (422), decode and type check (400),
 * the body against the URL, defaulting, then the Store's create (admission, BeforeCreate,
 * validation, persist or dry run); 201 with the object as stored (or as it would be).
 */
import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect } from "effect"
import type { StatusError } from "../../api/status.js"
import { readBody } from "../body.js"
import { decoderFor } from "../write/decode.js"
import { createOptions } from "../write/options.js"
import { create as storeCreate, defaulted } from "../write/store.js"
import { decodeRequestObject } from "./decode-object.js"
import { trackManagedFields } from "./field-manager.js"
import { objectResponse } from "./output.js"
import { type RequestScope, writeContext } from "./scope.js"

export const create = (s: RequestScope): Effect.Effect<HttpServerResponse.HttpServerResponse, StatusError> =>
  Effect.gen(function* () {
    const decoder = yield* decoderFor(s.request.headers["content-type"])
    const bytes = yield* readBody(s.request)
    const options = yield* createOptions(s.url.searchParams)
    const ctx = writeContext(s, options.dryRun)
    const obj = yield* decodeRequestObject(s, ctx, decoder, bytes, options)
    const tracked = trackManagedFields(s, options.fieldManager, undefined, yield* defaulted(ctx, "CREATE", obj))
    const stored = yield* storeCreate(ctx, tracked)
    return yield* objectResponse(s, stored, 201)
  })
