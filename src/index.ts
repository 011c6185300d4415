/**
 * etcd-effect's public API: one namespace per layer, each also importable on its own.
 *
 * - `Backend`: the storage service, LMDB (durable) or memory
 * - `Mvcc`: the revisioned store with etcd's Range/Put/DeleteRange/Txn/Compact
 * - `Lease`: the lessor
 * - `Auth`: etcd's auth store (users, roles, range permissions, simple and jwt tokens)
 * - `Watch`: the watchable store and watch streams
 * - `Server`: the etcd-compatible gRPC server (`Server.serve`, `Server.layer`)
 * - `Client`: the Effect-native etcd client (`Client.EtcdClient`)
 * - `Kubernetes`: the apiserver's storage (etcd3 and etcd2), watch cache and list/watch API
 * - `Tracing`: OTLP export of the client's, the server's and the apiserver's spans
 * - `Testing`: Layers for tests (@effect/vitest): an in-memory server with a client, an apiserver
 *
 * Two subpaths hold what most programs do not need: `etcd-effect/proto` (the etcd v3 protos as
 * loaded for grpc-js, their generated message types; src/proto/index.ts) and `etcd-effect/bench`
 * (the load generator of `etcd-effect bench`; src/bench/index.ts). test/package/public-api.txt
 * lists every name the root exports, public-api-proto.txt the proto subpath's; docs/api/ is the
 * reference made from these comments (`npm run docs:api`).
 *
 * @module etcd-effect
 */
export { EtcdError, Errors, GrpcCode } from "./errors.js"
export * as Auth from "./auth/index.js"
export * as Backend from "./backend/index.js"
export * as Client from "./client/index.js"
export * as Lease from "./lease/index.js"
export * as Mvcc from "./mvcc/index.js"
export * as Server from "./server/index.js"
export * as Kubernetes from "./kubernetes/index.js"
export * as Testing from "./testing/index.js"
export * as Tracing from "./tracing/index.js"
export * as Watch from "./watch/index.js"
