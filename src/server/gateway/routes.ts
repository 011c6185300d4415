/**
 * The gateway's paths, as etcd 3.4's rpc.proto declares them (google.api.http options) and its
 * client port serves them: under /v3/ and, for clients of etcd 3.3, /v3beta/ (3.4 no longer
 * serves /v3alpha/). All are POST with the request message as the body.
 */
import type { ServiceName } from "../../proto/load.js"

export type CallKind = "unary" | "bidi"

export interface Route {
  readonly service: ServiceName
  readonly method: string
  readonly kind: CallKind
}

const unary = (service: ServiceName, method: string): Route => ({ service, method, kind: "unary" })
const bidi = (service: ServiceName, method: string): Route => ({ service, method, kind: "bidi" })

/** Paths below the version prefix. */
const PATHS: Record<string, Route> = {
  "kv/range": unary("KV", "Range"),
  "kv/put": unary("KV", "Put"),
  "kv/deleterange": unary("KV", "DeleteRange"),
  "kv/txn": unary("KV", "Txn"),
  "kv/compaction": unary("KV", "Compact"),
  watch: bidi("Watch", "Watch"),
  "lease/grant": unary("Lease", "LeaseGrant"),
  "lease/revoke": unary("Lease", "LeaseRevoke"),
  // etcd 3.4 still answers the paths of 3.3 for these (additional_bindings)
  "kv/lease/revoke": unary("Lease", "LeaseRevoke"),
  "lease/keepalive": bidi("Lease", "LeaseKeepAlive"),
  "lease/timetolive": unary("Lease", "LeaseTimeToLive"),
  "kv/lease/timetolive": unary("Lease", "LeaseTimeToLive"),
  "lease/leases": unary("Lease", "LeaseLeases"),
  "kv/lease/leases": unary("Lease", "LeaseLeases"),
  "maintenance/alarm": unary("Maintenance", "Alarm"),
  "maintenance/status": unary("Maintenance", "Status"),
  "maintenance/defragment": unary("Maintenance", "Defragment"),
  // Hash and HashKV share this path in rpc.proto; grpc-gateway keeps the first, Hash
  "maintenance/hash": unary("Maintenance", "Hash"),
  "cluster/member/list": unary("Cluster", "MemberList"),
  // the token goes in the Authorization header (gateway.ts forwards it as "authorization" metadata)
  "auth/enable": unary("Auth", "AuthEnable"),
  "auth/disable": unary("Auth", "AuthDisable"),
  "auth/authenticate": unary("Auth", "Authenticate"),
  "auth/user/add": unary("Auth", "UserAdd"),
  "auth/user/get": unary("Auth", "UserGet"),
  "auth/user/list": unary("Auth", "UserList"),
  "auth/user/delete": unary("Auth", "UserDelete"),
  "auth/user/changepw": unary("Auth", "UserChangePassword"),
  "auth/user/grant": unary("Auth", "UserGrantRole"),
  "auth/user/revoke": unary("Auth", "UserRevokeRole"),
  "auth/role/add": unary("Auth", "RoleAdd"),
  "auth/role/get": unary("Auth", "RoleGet"),
  "auth/role/list": unary("Auth", "RoleList"),
  "auth/role/delete": unary("Auth", "RoleDelete"),
  "auth/role/grant": unary("Auth", "RoleGrantPermission"),
  "auth/role/revoke": unary("Auth", "RoleRevokePermission")
}

export const PREFIXES = ["/v3/", "/v3beta/"] as const

/** Whether the gateway answers this path at all (its 404 and 405 differ from the plain mux's). */
export const isGatewayPath = (pathname: string): boolean => PREFIXES.some((p) => pathname.startsWith(p))

/** The route of a gateway path, if any. */
export const lookupRoute = (pathname: string): Route | undefined => {
  for (const prefix of PREFIXES) {
    if (pathname.startsWith(prefix)) return PATHS[pathname.slice(prefix.length)]
  }
  return undefined
}
