/**
 * endpoints/handlers/get.go ListResource (the list half): options decoded, defaulted and
 * validated (422), selectors parsed (400), then the storage's GetList with the apiserver's RV
 * semantics (the Cacher decides what it serves and what goes to etcd).
 */
import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect, Either } from "effect"
import { notKnownFieldSelector } from "../../api/fields.js"
import type { StatusError } from "../../api/status.js"
import { parsePredicate, type SelectionPredicate } from "../../storage/selection-predicate.js"
import type { ResourceVersionMatch } from "../../storage/interfaces.js"
import { type ListQuery } from "../query.js"
import { badRequest } from "../response.js"
import { listResponse } from "./output.js"
import { listKey, type RequestScope } from "./scope.js"

/** The request's predicate; a watch/list on `…/NAME` selects metadata.name=NAME (400 if the selector says otherwise). */
export const predicateOf = (s: RequestScope, q: ListQuery): Either.Either<SelectionPredicate, StatusError> => {
  let fieldSelector = q.fieldSelector
  if (s.name !== undefined) {
    if (fieldSelector !== "") {
      const p = parsePredicate({ fieldSelector })
      if (Either.isLeft(p)) return p
      if (p.right.field.requiresExactMatch("metadata.name") !== s.name) {
        return Either.left(badRequest("fieldSelector metadata.name doesn't match requested name"))
      }
    } else {
      fieldSelector = `metadata.name=${s.name}`
    }
  }
  return parsePredicate({
    labelSelector: q.labelSelector,
    fieldSelector,
    limit: q.limit,
    continue: q.continue,
    allowWatchBookmarks: q.allowWatchBookmarks,
    getAttrs: s.info.getAttrs,
    supportedFields: s.info.selectableFields,
    unsupportedField: s.info.fieldLabelError ?? notKnownFieldSelector
  })
}

export const list = (
  s: RequestScope,
  q: ListQuery
): Effect.Effect<HttpServerResponse.HttpServerResponse, StatusError> =>
  Effect.gen(function* () {
    const predicate = yield* predicateOf(s, q)
    const result = yield* s.served.storage.getList(listKey(s), {
      resourceVersion: q.resourceVersion,
      resourceVersionMatch: q.resourceVersionMatch as ResourceVersionMatch,
      predicate,
      recursive: true
    })
    return yield* listResponse(s, result)
  })
