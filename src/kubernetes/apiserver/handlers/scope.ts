/**
 * endpoints/handlers' RequestScope: what every verb handler knows about its request — the served
 * resource and its storage, the version and namespace/name from the URL, the negotiated output,
 * the warnings it collects, and the request itself. `writeContext` is what the write pipeline's
 * stages see of it.
 */
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import type { ApiMetrics } from "../metrics.js"
import type { OutputMedia } from "../negotiation.js"
import type { ResourceRegistry, ServedResource } from "../registry.js"
import { apiVersionOf, keyOf, type ResourceInfo } from "../resources.js"
import type { NamespaceLifecycle } from "../write/admission.js"
import type { WriteContext } from "../write/pipeline.js"
import type { Warnings } from "../write/warnings.js"

export interface RequestScope {
  readonly served: ServedResource
  readonly info: ResourceInfo
  /** the URL's version and group/version ("v1", "example.com/v1") */
  readonly version: string
  readonly apiVersion: string
  /** the namespace of a namespaced request (undefined: all namespaces, or a cluster-scoped resource) */
  readonly namespace: string | undefined
  readonly name: string | undefined
  /** a subresource of the object (namespaces/{name}/status, …/finalize) */
  readonly subresource: string | undefined
  readonly url: URL
  readonly request: HttpServerRequest.HttpServerRequest
  /** what the Accept header asked for */
  readonly output: OutputMedia
  readonly metrics: ApiMetrics
  readonly registry: ResourceRegistry
  readonly lifecycle: NamespaceLifecycle
  /** the Warning headers of the answer */
  readonly warnings: Warnings
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

/** The strategy of the request: its version's (a CRD's), its subresource's. */
const strategyOf = (s: RequestScope) => {
  const v = s.info.versionStrategies?.[s.version]
  const subresources = v?.subresources ?? s.info.subresources
  const main = v?.strategy ?? s.info.strategy
  return (s.subresource === undefined ? undefined : subresources[s.subresource]) ?? main
}

/** The write pipeline's view of the request (the subresource's strategy when there is one). */
export const writeContext = (s: RequestScope, dryRun: boolean): WriteContext => ({
  info: s.info,
  strategy: strategyOf(s),
  storage: s.served.storage,
  registry: s.registry,
  lifecycle: s.lifecycle,
  namespace: s.namespace,
  dryRun,
  warnings: s.warnings,
  apiVersion: s.apiVersion
})
