/**
 * endpoints/request/requestinfo.go: what a URL and method ask for. Resource paths are
 *   /api/v1[/namespaces/{ns}]/{resource}[/{name}[/{subresource}]]
 *   /apis/{group}/{version}[/namespaces/{ns}]/{resource}[/{name}[/{subresource}]]
 * (and the legacy /api/v1/watch/… prefix); everything else is a non-resource path (discovery,
 * health, metrics). The verb comes from the method, `?watch`, and whether a name is given.
 */
import { parseBool } from "./query.js"

export type Verb = "get" | "list" | "watch" | "create" | "update" | "patch" | "delete" | "deletecollection"

export interface ResourceRequest {
  readonly _tag: "Resource"
  readonly verb: Verb
  readonly group: string
  readonly version: string
  /** undefined: not in the path */
  readonly namespace: string | undefined
  readonly resource: string
  readonly name: string | undefined
  readonly subresource: string | undefined
}

export interface NonResourceRequest {
  readonly _tag: "NonResource"
  readonly path: string
}

export type RequestInfo = ResourceRequest | NonResourceRequest

const verbOf = (method: string, hasName: boolean, watch: boolean): Verb | undefined => {
  switch (method) {
    case "GET":
    case "HEAD":
      return watch ? "watch" : hasName ? "get" : "list"
    case "POST":
      return "create"
    case "PUT":
      return "update"
    case "PATCH":
      return "patch"
    case "DELETE":
      return hasName ? "delete" : "deletecollection"
    default:
      return undefined
  }
}

/** namespaceSubresources: what after /namespaces/{name}/ is the namespace's own */
const NAMESPACE_SUBRESOURCES = ["status", "finalize"]

export const requestInfo = (method: string, url: URL): RequestInfo | { readonly _tag: "BadMethod" } => {
  const parts = url.pathname
    .split("/")
    .filter((p) => p !== "")
    .map(decodeURIComponent)
  let rest: Array<string>
  let group: string
  let version: string
  if (parts[0] === "api" && parts.length >= 3) {
    group = ""
    version = parts[1]!
    rest = parts.slice(2)
  } else if (parts[0] === "apis" && parts.length >= 4) {
    group = parts[1]!
    version = parts[2]!
    rest = parts.slice(3)
  } else {
    return { _tag: "NonResource", path: url.pathname }
  }
  let watch = parseBool(url.searchParams.get("watch"))
  if (rest[0] === "watch") {
    watch = true
    rest = rest.slice(1)
  }
  let namespace: string | undefined
  if (rest[0] === "namespaces" && rest.length >= 2) {
    namespace = rest[1]!
    // /namespaces/{ns} is the namespace itself (and /status, /finalize its subresources);
    // /namespaces/{ns}/{resource}… is inside it
    if (rest.length > 2 && !NAMESPACE_SUBRESOURCES.includes(rest[2]!)) rest = rest.slice(2)
  }
  if (rest.length === 0) return { _tag: "NonResource", path: url.pathname }
  const resource = rest[0]!
  const name = rest[1]
  const subresource = rest.length > 2 ? rest.slice(2).join("/") : undefined
  const verb = verbOf(method, name !== undefined, watch === true)
  if (verb === undefined) return { _tag: "BadMethod" }
  return { _tag: "Resource", verb, group, version, namespace, resource, name, subresource }
}
