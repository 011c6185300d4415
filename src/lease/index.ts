/**
 * Leases (etcd's server/lease): the `Lessor` service and its layer. Internals (the lease map,
 * the expiry queue, the record codec) stay in their own files.
 *
 * @module
 */
export {
  defaultLessorConfig,
  type LeaseGrantRequest,
  type LeaseGrantResponse,
  type LeaseKeepAliveResponse,
  type LeaseLeasesResponse,
  type LeaseRevokeResponse,
  type LeaseStatus,
  type LeaseTimeToLiveRequest,
  type LeaseTimeToLiveResponse,
  layer,
  layerWith,
  Lessor,
  type LessorConfig,
  type LessorShape,
  MaxLeaseTTL,
  minLeaseTTLFor
} from "./lessor.js"
export { NoLease } from "./lease-id.js"
