/**
 * etcd's server gauges (server/etcdserver/metrics.go) for a member that is always its own leader
 * and never a learner, and the health-check counters of etcdhttp.
 */
import { Effect } from "effect"
import type { HealthCounters } from "./health.js"
import { type Collector, counter, gauge, info } from "./prometheus.js"

export interface ServerSources {
  /** the version Maintenance.Status reports */
  readonly version: string
  readonly memberId: bigint
  readonly health: HealthCounters
}

export const serverCollector = ({ health, memberId, version }: ServerSources): Collector =>
  Effect.sync(() => [
    gauge("etcd_server_has_leader", "Whether or not a leader exists. 1 is existence, 0 is not.", 1),
    gauge("etcd_server_is_leader", "Whether or not this member is a leader. 1 if is, 0 otherwise.", 1),
    gauge("etcd_server_is_learner", "Whether or not this member is a learner. 1 if is, 0 otherwise.", 0),
    info("etcd_server_version", "Which version is running. 1 for 'server_version' label with current version.", {
      server_version: version
    }),
    info("etcd_server_id", "Server or member ID in hexadecimal format. 1 for 'server_id' label with current ID.", {
      server_id: memberId.toString(16)
    }),
    counter("etcd_server_health_success", "The total number of successful health checks", health.success),
    counter("etcd_server_health_failures", "The total number of failed health checks", health.failures)
  ])
