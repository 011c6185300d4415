/**
 * A POST or PUT body through the pipeline's first stage (write/decode.ts) and the handlers' checks
 * against the URL (its kind and apiVersion, EnsureObjectNamespaceMatchesRequestNamespace).
 */
import { Effect } from "effect"
import type { StatusError } from "../../api/status.js"
import type { Obj } from "../kinds/strategy.js"
import { type BodyDecoder, decodeBody } from "../write/decode.js"
import { checkTypeMeta, ensureNamespace } from "../write/object-checks.js"
import type { WriteOptions } from "../write/options.js"
import type { WriteContext } from "../write/pipeline.js"
import type { RequestScope } from "./scope.js"

export const decodeRequestObject = (
  s: RequestScope,
  ctx: WriteContext,
  decoder: BodyDecoder,
  bytes: Uint8Array,
  options: WriteOptions
): Effect.Effect<Obj, StatusError> =>
  Effect.gen(function* () {
    const obj = yield* decodeBody(decoder, bytes, {
      kind: s.info.kind,
      version: s.version,
      apiVersion: s.apiVersion,
      custom: s.info.custom,
      schema: ctx.strategy.schema,
      coerce: ctx.strategy.coerce,
      fieldValidation: options.fieldValidation,
      warnings: s.warnings
    })
    yield* checkTypeMeta(s.info, s.apiVersion, obj)
    yield* ensureNamespace(s.info, s.namespace, obj)
    return obj
  })
