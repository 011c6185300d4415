/**
 * etcd-effect's public API, one namespace per layer (each is also importable on its own):
 *
 * - `Backend`: the storage service, LMDB (durable) or memory
 * - `Mvcc`: the revisioned store with etcd's Range/Put/DeleteRange/Txn/Compact
 * - `Lease`: the lessor
 * - `Auth`: etcd's auth store (users, roles, range permissions, simple and jwt tokens)
 * - `Watch`: the watchable store and watch streams
 * - `Server`: the etcd-compatible gRPC server (`Server.serve`, `Server.layer`)
 * - `Client`: the Effect-native etcd client (`Client.EtcdClient`)
 * - `Proto`: the etcd v3 protos as loaded for grpc-js
 * - `Kubernetes`: the apiserver's storage (etcd3 and etcd2), watch cache and list/watch API
 *
 * The load generator of `etcd-effect bench` is not here: it is the subpath `etcd-effect/bench`
 * (src/bench/index.ts). test/package/public-api.txt lists every name this module exports.
 */
export { EtcdError, Errors, GrpcCode } from "./errors.js"
export * as Auth from "./auth/index.js"
export * as Backend from "./backend/index.js"
export * as Client from "./client/index.js"
export * as Lease from "./lease/index.js"
export * as Mvcc from "./mvcc/index.js"
export * as Proto from "./proto/index.js"
export * as Server from "./server/index.js"
export * as Kubernetes from "./kubernetes/index.js"
export * as Watch from "./watch/index.js"
