/**
 * endpoints/handlers' RequestScope: what every verb handler knows about its request — the served
 * resource and its storage, the version and namespace/name from the URL, and the request itself.
 */
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import type { ApiMetrics } from "../metrics.js"
import type { ResourceRegistry, ServedResource } from "../registry.js"
import { apiVersionOf, keyOf, type ResourceInfo } from "../resources.js"

export interface RequestScope {
  readonly served: ServedResource
  readonly info: ResourceInfo
  /** the URL's version and group/version ("v1", "example.com/v1") */
  readonly version: string
  readonly apiVersion: string
  /** the namespace of a namespaced request (undefined: all namespaces, or a cluster-scoped resource) */
  readonly namespace: string | undefined
  readonly name: string | undefined
  readonly url: URL
  readonly request: HttpServerRequest.HttpServerRequest
  /** Accept asks for a Table */
  readonly table: boolean
  readonly metrics: ApiMetrics
  readonly registry: ResourceRegistry
}

export const makeScope = (
  served: ServedResource,
  version: string,
  namespace: string | undefined,
  name: string | undefined,
  rest: Omit<RequestScope, "served" | "info" | "version" | "apiVersion" | "namespace" | "name">
): RequestScope => ({
  ...rest,
  served,
  info: served.info,
  version,
  apiVersion: apiVersionOf(served.info.group, version),
  namespace: served.info.namespaced ? namespace : undefined,
  name
})

/** The storage key of the request's object. */
export const objectKey = (s: RequestScope, name: string): string => keyOf(s.info, s.namespace, name)

/** The storage key of the request's collection (one namespace, or all). */
export const listKey = (s: RequestScope): string => keyOf(s.info, s.namespace)
