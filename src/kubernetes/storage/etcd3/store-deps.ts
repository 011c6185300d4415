/**
 * The etcd3 store's own parts (the `store` struct of the apiserver's etcd3/store.go): the client,
 * where the resource's keys live, the value transformer and the lease manager, set once per
 * store; and the small steps every operation shares (prepare a key, call etcd, a lease for a TTL,
 * check a read against the asked-for resourceVersion).
 */
import { Effect, Either } from "effect"
import type { EtcdClientShape } from "../../../client/client.js"
import type { EtcdError } from "../../../errors.js"
import { type GroupResource, newBadRequest, newTooLargeResourceVersion, type StatusError } from "../../api/status.js"
import { encryptCheck } from "../value/identity.js"
import type { ValueTransformer } from "../value/transformer.js"
import { parseResourceVersion } from "../versioner.js"
import type { Etcd3StoreConfig } from "./config.js"
import { fromEtcd } from "./errors.js"
import { type LeaseManager, makeLeaseManager } from "./lease-manager.js"
import { normalizePathPrefix, prepareKey } from "./prepare-key.js"

export interface StoreDeps {
  readonly client: EtcdClientShape
  readonly config: Etcd3StoreConfig
  /** the etcd key prefix of every object, normalised ("/registry/") */
  readonly pathPrefix: string
  readonly resourcePrefix: string
  readonly groupResource: GroupResource
  readonly transformer: ValueTransformer
  readonly leases: LeaseManager
  /** GetCurrentResourceVersion: etcd's revision, from a count-only read of the resource's keys */
  readonly currentRevision: Effect.Effect<bigint, StatusError>
}

/** A failed etcd call the caller does not interpret: 500 with etcd's message. */
export const etcdCall = <A>(effect: Effect.Effect<A, EtcdError>): Effect.Effect<A, StatusError> =>
  Effect.mapError(effect, fromEtcd)

export const makeStoreDeps = (client: EtcdClientShape, config: Etcd3StoreConfig): StoreDeps => {
  const pathPrefix = normalizePathPrefix(config.pathPrefix)
  const resourcePrefix = config.resourcePrefix
  const resourceKey = pathPrefix + (resourcePrefix.startsWith("/") ? resourcePrefix.slice(1) : resourcePrefix)
  return {
    client,
    config,
    pathPrefix,
    resourcePrefix,
    groupResource: config.groupResource,
    // the apiserver's default: plain values, but encrypted data is refused rather than served as an object
    transformer: config.transformer ?? encryptCheck,
    leases: makeLeaseManager(client),
    currentRevision: Effect.map(
      etcdCall(client.kv.get(resourceKey, { prefix: true, countOnly: true })),
      (r) => r.header.revision
    )
  }
}

/** The etcd key of a Storage key (prepareKey), failing as the apiserver does. */
export const prepare = (s: StoreDeps, key: string, recursive: boolean): Effect.Effect<string, StatusError> =>
  Effect.suspend(() => prepareKey(s.pathPrefix, s.resourcePrefix, key, recursive))

/** The lease an object with a TTL is written under (none without a TTL). */
export const leaseFor = (s: StoreDeps, ttl: number | undefined): Effect.Effect<bigint | undefined, StatusError> =>
  ttl === undefined || ttl <= 0 ? Effect.succeed(undefined) : s.leases.getLease(ttl)

/** validateMinimumResourceVersion: the read must be at least the asked-for RV */
export const validateMinimumResourceVersion = (
  minimum: string | undefined,
  actual: bigint
): Effect.Effect<void, StatusError> => {
  if (minimum === undefined || minimum === "") return Effect.void
  const parsed = parseResourceVersion(minimum)
  if (Either.isLeft(parsed)) return Effect.fail(newBadRequest(`invalid resource version: ${parsed.left}`))
  if (parsed.right > actual) return Effect.fail(newTooLargeResourceVersion(parsed.right, actual, 0))
  return Effect.void
}
