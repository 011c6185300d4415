/** endpoints/handlers/get.go GetResource: one object (RV "" from etcd, "0"/N possibly from the cache). */
import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect } from "effect"
import type { StatusError } from "../../api/status.js"
import { objectResponse } from "./output.js"
import { objectKey, type RequestScope } from "./scope.js"

export const get = (s: RequestScope, name: string): Effect.Effect<HttpServerResponse.HttpServerResponse, StatusError> =>
  Effect.flatMap(
    s.served.storage.get(objectKey(s, name), { resourceVersion: s.url.searchParams.get("resourceVersion") ?? "" }),
    (obj) => objectResponse(s, obj!)
  )
