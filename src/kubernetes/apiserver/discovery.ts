/**
 * Discovery (endpoints/discovery): /api (APIVersions), /apis (APIGroupList), /apis/<group>
 * (APIGroup), /api/v1 and /apis/<group>/<version> (APIResourceList with verbs, shortNames,
 * categories, namespaced, storageVersionHash, and the subresources served: `namespaces/status`,
 * `widgets/scale`, …), all from the registry as it is now — a CRD's resource appears as soon
 * as it is served — and the create-only review resources of authorization.k8s.io and
 * authentication.k8s.io (authorization/access-review.ts). Legacy (unaggregated) discovery: kubectl and client-go fall back to it when the
 * answer is plain application/json. Also /version.
 */
import { createHash } from "node:crypto"
import { REVIEW_RESOURCES } from "./authorization/access-review.js"
import type { ResourceRegistry } from "./registry.js"
import { apiVersionOf, type ResourceInfo, verbsOf } from "./resources.js"

/** The Kubernetes version whose API behaviour this server follows (WatchList defaulting of 1.34). */
export const KUBE_VERSION = { major: "1", minor: "34", gitVersion: "v1.34.0" } as const

export const versionInfo = () => ({
  major: KUBE_VERSION.major,
  minor: KUBE_VERSION.minor,
  gitVersion: KUBE_VERSION.gitVersion,
  gitCommit: "",
  gitTreeState: "clean",
  buildDate: "",
  goVersion: `node${process.versions.node}`,
  compiler: "etcd-effect",
  platform: `${process.platform}/${process.arch}`
})

/** version.CompareKubeAwareVersionStrings order: v2 > v1 > v1beta2 > v1beta1 > v1alpha1 > anything else. */
export const versionPriority = (a: string, b: string): number => {
  const parse = (v: string) => {
    const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v)
    if (m === null) return [0, 0, 0, v] as const
    return [
      1,
      Number(m[1]),
      m[2] === undefined ? 3 : m[2] === "beta" ? 2 : 1,
      m[3] === undefined ? 0 : Number(m[3])
    ] as const
  }
  const pa = parse(a)
  const pb = parse(b)
  if (pa[0] !== pb[0]) return pb[0] - pa[0]
  if (pa[0] === 0) return a < b ? -1 : a > b ? 1 : 0
  if (pa[2] !== pb[2]) return (pb[2] as number) - (pa[2] as number)
  if (pa[1] !== pb[1]) return (pb[1] as number) - (pa[1] as number)
  return (pb[3] as number) - (pa[3] as number)
}

export const apiVersions = (serverAddress: string) => ({
  kind: "APIVersions",
  versions: ["v1"],
  serverAddressByClientCIDRs: [{ clientCIDR: "0.0.0.0/0", serverAddress }]
})

const groupsOf = (registry: ResourceRegistry): Map<string, Array<string>> => {
  const groups = new Map<string, Set<string>>()
  const add = (group: string, versions: ReadonlyArray<string>) => {
    if (group === "") return
    let set = groups.get(group)
    if (set === undefined) groups.set(group, (set = new Set()))
    for (const v of versions) set.add(v)
  }
  for (const r of registry.all()) add(r.info.group, r.info.versions)
  for (const r of REVIEW_RESOURCES) add(r.group, [r.version])
  return new Map(Array.from(groups, ([g, vs]) => [g, Array.from(vs).sort(versionPriority)]))
}

const apiGroup = (name: string, versions: ReadonlyArray<string>) => {
  const vs = versions.map((version) => ({ groupVersion: `${name}/${version}`, version }))
  return { name, versions: vs, preferredVersion: vs[0] }
}

export const apiGroupList = (registry: ResourceRegistry) => ({
  kind: "APIGroupList",
  apiVersion: "v1",
  groups: Array.from(groupsOf(registry), ([name, versions]) => apiGroup(name, versions)).sort((a, b) =>
    a.name === "apiextensions.k8s.io" ? -1 : b.name === "apiextensions.k8s.io" ? 1 : a.name.localeCompare(b.name)
  )
})

export const apiGroupOf = (registry: ResourceRegistry, group: string) => {
  const versions = groupsOf(registry).get(group)
  return versions === undefined ? undefined : { kind: "APIGroup", apiVersion: "v1", ...apiGroup(group, versions) }
}

/** StorageVersionHash: the first 8 bytes of sha256("<group>/<version>/<kind>") of the stored form, base64 */
export const storageVersionHash = (group: string, version: string, kind: string): string =>
  createHash("sha256").update(`${group}/${version}/${kind}`).digest().subarray(0, 8).toString("base64")

const SUBRESOURCE_VERBS: Readonly<Record<string, ReadonlyArray<string>>> = { finalize: ["update"] }

const apiResources = (r: ResourceInfo, version: string) => {
  // an object served through another group's storage (events.k8s.io's Events) hashes its stored form
  const stored = r.storageCodec !== undefined ? { group: "", kind: r.kind } : { group: r.group, kind: r.kind }
  const main = {
    name: r.plural,
    singularName: r.singular,
    namespaced: r.namespaced,
    kind: r.kind,
    verbs: verbsOf(r),
    ...(r.shortNames.length > 0 ? { shortNames: r.shortNames } : {}),
    ...(r.categories.length > 0 ? { categories: r.categories } : {}),
    storageVersionHash: storageVersionHash(stored.group, r.storageVersion, stored.kind)
  }
  // built-in subresources in go-restful's (alphabetical) order, a CRD's as apiextensions lists them
  const names = Object.keys(r.versionStrategies?.[version]?.subresources ?? r.subresources)
  const ordered = r.custom ? ["status", "scale"].filter((n) => names.includes(n)) : names.sort()
  const subresources = ordered.map((sub) => ({
    name: `${r.plural}/${sub}`,
    singularName: "",
    namespaced: r.namespaced,
    ...(sub === "scale" ? { group: "autoscaling", version: "v1", kind: "Scale" } : { kind: r.kind }),
    verbs: SUBRESOURCE_VERBS[sub] ?? ["get", "patch", "update"]
  }))
  return [main, ...subresources]
}

const reviewResources = (group: string, version: string) =>
  REVIEW_RESOURCES.filter((r) => r.group === group && r.version === version).map((r) => ({
    name: r.plural,
    singularName: r.singular,
    namespaced: r.namespaced,
    kind: r.kind,
    verbs: ["create"]
  }))

/** The APIResourceList of group/version, undefined when nothing is served there. */
export const apiResourceList = (registry: ResourceRegistry, group: string, version: string) => {
  const resources = registry.all().filter((r) => r.info.group === group && r.info.versions.includes(version))
  const reviews = reviewResources(group, version)
  if (resources.length === 0 && reviews.length === 0) return undefined
  return {
    kind: "APIResourceList",
    apiVersion: "v1",
    groupVersion: apiVersionOf(group, version),
    resources: [
      ...resources
        .map((r) => r.info)
        .sort((a, b) => a.plural.localeCompare(b.plural))
        .flatMap((info) => apiResources(info, version)),
      ...reviews
    ]
  }
}
