/**
 * etcd's health checks (server/etcdserver/api/etcdhttp/health.go), for the HTTP endpoints:
 *
 * - /health (etcd 3.5): alarms (none are ever raised here), leader (always this member, skipped
 *   with ?serializable=true as etcd does), then one Range — keys only, limit 1, linearizable unless
 *   ?serializable=true — that must answer within etcd's request timeout. `{"health":"true",
 *   "reason":""}`, or "false" with the reason ("RANGE ERROR:<error>").
 * - /livez and /readyz (etcd 3.6): named checks, each ok or failed with a reason; livez only
 *   reads serializably, readyz also linearizably (and checks alarms and learner state).
 *
 * A member here has no raft, so both kinds of read are a read of the committed state; they still
 * go through the store as a client's Range does, so a stopped or failing store fails them.
 */
import { Cause, Duration, Effect, Option } from "effect"
import type { MvccStoreShape } from "../../mvcc/kv.js"

/** etcd's ReqTimeout() with default timings: 5 s + 2 × the 1 s election timeout. */
export const HEALTH_REQUEST_TIMEOUT = Duration.seconds(7)

/** etcd's ErrTimeout text. */
const TIMED_OUT = "etcdserver: request timed out"

/** The key read by the checks (etcd reads the empty key, which our store's checks refuse). */
const HEALTH_KEY = new TextEncoder().encode("health")

/** etcd_server_health_success / _failures: outcomes of /health. */
export class HealthCounters {
  success = 0
  failures = 0
}

/** etcd's Health JSON (3.5+; etcd 3.4 has no reason field). */
export interface Health {
  readonly health: "true" | "false"
  readonly reason: string
}

/** One Range like etcd's checkAPI/readCheck: undefined when it answered, else why not. */
export const readCheck = (store: MvccStoreShape, serializable: boolean): Effect.Effect<string | undefined> =>
  Effect.suspend(() => store.range({ key: HEALTH_KEY, keysOnly: true, limit: 1, serializable })).pipe(
    Effect.timeoutFail({ duration: HEALTH_REQUEST_TIMEOUT, onTimeout: () => ({ message: TIMED_OUT }) }),
    Effect.matchCause({
      onSuccess: () => undefined,
      onFailure: (cause) => {
        const failure = Cause.failureOption(cause)
        if (Option.isSome(failure)) return failure.value.message
        return Cause.isInterruptedOnly(cause) ? "etcdserver: server stopped" : `internal error: ${Cause.squash(cause)}`
      }
    })
  )

export interface HealthOptions {
  /** ?serializable=true: a local read, and no leader check */
  readonly serializable: boolean
  /** ?exclude=NOSPACE...: alarms that do not make the member unhealthy */
  readonly exclude: ReadonlySet<string>
}

/**
 * /health. An alarm that is up and not excluded makes the member unhealthy ("ALARM NOSPACE", as
 * etcd's checkAlarms) before any read; leader: always this member.
 */
export const checkHealth = (
  store: MvccStoreShape,
  options: HealthOptions,
  alarms: () => ReadonlyArray<string> = () => []
): Effect.Effect<Health> => {
  for (const name of alarms()) {
    if (options.exclude.has(name)) continue
    const reason = name === "NOSPACE" || name === "CORRUPT" ? `ALARM ${name}` : "ALARM UNKNOWN"
    return Effect.succeed({ health: "false", reason })
  }
  return Effect.map(readCheck(store, options.serializable), (error) =>
    error === undefined ? { health: "true", reason: "" } : { health: "false", reason: `RANGE ERROR:${error}` }
  )
}

/** A named check of /livez or /readyz: undefined when ok, else why it failed. */
export interface HealthCheck {
  readonly name: string
  readonly run: Effect.Effect<string | undefined>
}

const ok: Effect.Effect<string | undefined> = Effect.succeed(undefined)

/** /livez: is the process serving local reads. */
export const livezChecks = (store: MvccStoreShape): ReadonlyArray<HealthCheck> => [
  { name: "serializable_read", run: readCheck(store, true) }
]

/** /readyz: can it serve clients (etcd's checks in its registration order). */
export const readyzChecks = (store: MvccStoreShape): ReadonlyArray<HealthCheck> => [
  // no corruption alarm is ever raised here
  { name: "data_corruption", run: ok },
  { name: "serializable_read", run: readCheck(store, true) },
  { name: "linearizable_read", run: readCheck(store, false) },
  // a single member is never a learner
  { name: "non_learner", run: ok }
]

export interface CheckReport {
  readonly ok: boolean
  /** one line per check: "[+]name ok" or "[-]name failed: reason" */
  readonly text: string
}

/** Runs the checks in order (etcd's runHealthChecks). */
export const runChecks = (checks: ReadonlyArray<HealthCheck>): Effect.Effect<CheckReport> =>
  Effect.map(
    Effect.forEach(checks, (c) => c.run),
    (results) => {
      let text = ""
      let allOk = true
      results.forEach((error, i) => {
        const name = checks[i]!.name
        if (error === undefined) text += `[+]${name} ok\n`
        else {
          allOk = false
          text += `[-]${name} failed: ${error}\n`
        }
      })
      return { ok: allOk, text }
    }
  )
