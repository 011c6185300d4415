/**
 * endpoints/handlers/create.go + the generic registry's Create: decode (≤ 3 MiB, JSON), check the
 * body against the URL, BeforeCreate, the namespace must exist (NamespaceLifecycle admission),
 * then storage.Create; 201 with the stored object.
 */
import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect } from "effect"
import { newNotFound, type StatusError } from "../../api/status.js"
import { readJsonObject } from "../body.js"
import { prepareCreate } from "../object-rest.js"
import { keyOf, namespaces } from "../resources.js"
import { objectResponse } from "./output.js"
import { objectKey, type RequestScope } from "./scope.js"

/** NamespaceLifecycle: objects go only into existing namespaces (the cache first, then etcd). */
export const requireNamespace = (s: RequestScope, namespace: string): Effect.Effect<void, StatusError> => {
  const ns = s.registry.byGroupResource("", "namespaces")
  if (ns === undefined) return Effect.void
  const key = keyOf(namespaces, undefined, namespace)
  return Effect.gen(function* () {
    const cached = yield* ns.storage.get(key, { resourceVersion: "0", ignoreNotFound: true })
    if (cached !== undefined) return
    const live = yield* ns.storage.get(key, { ignoreNotFound: true })
    if (live === undefined) return yield* Effect.fail(newNotFound({ group: "", resource: "namespaces" }, namespace))
  })
}

export const create = (s: RequestScope): Effect.Effect<HttpServerResponse.HttpServerResponse, StatusError> =>
  Effect.gen(function* () {
    const body = yield* readJsonObject(s.request)
    const obj = yield* prepareCreate(s.info, s.apiVersion, s.namespace, body)
    if (s.info.namespaced) yield* requireNamespace(s, s.namespace!)
    const stored = yield* s.served.storage.create(objectKey(s, obj.metadata.name!), obj)
    return objectResponse(s, stored, 201)
  })
