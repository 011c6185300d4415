/**
 * The member a restore makes, from etcdutl's restore flags, checked in its order and words
 * (types.NewURLs of --initial-advertise-peer-urls, types.NewURLsMap of --initial-cluster, then
 * ServerConfig.VerifyBootstrap: the local name in the cluster, its URLs the advertised ones, no URL
 * twice) and its ids as etcdutl derives them (member-id.ts). etcd-effect is one member: an
 * --initial-cluster naming others is refused as `serve` refuses it.
 */
import { checkEtcdUrl } from "../flags/flag.js"
import { computeClusterId, computeMemberId } from "../../server/snapshot/member-id.js"

export interface RestoreMemberFlags {
  readonly name: string
  readonly initialCluster: string
  readonly initialClusterToken: string
  readonly initialAdvertisePeerUrls: string
}

export interface RestoredMember {
  readonly memberId: bigint
  readonly clusterId: bigint
  readonly peerUrls: ReadonlyArray<string>
}

/** types.NewURLs: each URL checked (trimmed), sorted; its first error */
const newUrls = (list: ReadonlyArray<string>): Array<string> | string => {
  if (list.length === 0) return "no valid URLs given"
  const out: Array<string> = []
  for (const raw of list) {
    const u = raw.trim()
    const reason = checkEtcdUrl(u)
    if (reason !== undefined) return reason
    out.push(u)
  }
  return out.sort()
}

/** types.URLsMap's parse: name=url pairs, a name given twice gathers its URLs */
const parseMap = (s: string): Map<string, Array<string>> => {
  const m = new Map<string, Array<string>>()
  for (const part of s.split(",")) {
    if (part === "") continue
    const eq = part.indexOf("=")
    const [name, url] = eq < 0 ? [part, ""] : [part.slice(0, eq), part.slice(eq + 1)]
    m.set(name, [...(m.get(name) ?? []), url])
  }
  return m
}

const goQuoted = (l: ReadonlyArray<string>) => `[${l.map((s) => JSON.stringify(s)).join(" ")}]`

export const restoreMember = (f: RestoreMemberFlags): RestoredMember | string => {
  const peers = newUrls(f.initialAdvertisePeerUrls.split(","))
  if (typeof peers === "string") return peers
  const cluster = new Map<string, Array<string>>()
  for (const [name, list] of parseMap(f.initialCluster)) {
    const urls = newUrls(list)
    if (typeof urls === "string") return urls
    cluster.set(name, urls)
  }
  const mine = cluster.get(f.name)
  if (mine === undefined)
    return `couldn't find local name ${JSON.stringify(f.name)} in the initial cluster configuration`
  if (peers.join(",") !== mine.join(",")) {
    const missing = mine.filter((u) => !peers.includes(u))
    const why =
      peers.length !== mine.length
        ? `len(${goQuoted(peers)}) != len(${goQuoted(mine)})`
        : `resolved urls: ${JSON.stringify(peers.find((u, i) => u !== mine[i]))} != ${JSON.stringify(mine.find((u, i) => u !== peers[i]))}`
    if (missing.length > 0) {
      return `--initial-cluster has ${missing.map((u) => `${f.name}=${u}`).join(",")} but missing from --initial-advertise-peer-urls=${peers.join(",")} (${why})`
    }
    const extra = peers.filter((u) => !mine.includes(u))
    return `--initial-advertise-peer-urls has ${extra.join(",")} but missing from --initial-cluster=${peers.map((u) => `${f.name}=${u}`).join(",")}`
  }
  const all = [...cluster.values()].flat()
  if (new Set(all).size !== all.length) {
    const text = [...cluster]
      .flatMap(([n, us]) => us.map((u) => `${n}=${u}`))
      .sort()
      .join(",")
    return `initial cluster ${text} has duplicate url`
  }
  const others = [...cluster.keys()].filter((n) => n !== f.name)
  if (others.length > 0) {
    return `--initial-cluster names ${others.join(", ")} besides ${f.name}: etcd-effect is one member; restore a cluster of several with etcdutl`
  }
  const memberId = computeMemberId(mine, f.initialClusterToken)
  if (memberId === 0n) return "cannot use 0 as member id"
  return { memberId, clusterId: computeClusterId([memberId]), peerUrls: mine }
}
