/**
 * Corruption, for one member (etcd's etcdserver/corrupt.go and apply/corrupt.go, with the local
 * checksum of every stored value, src/backend/value-checksum.ts, in place of the comparison of
 * HashKV across members that a single member cannot make):
 *
 * - A record whose checksum fails is never served: the read fails with "etcdserver: corrupt
 *   cluster" (DataLoss; src/mvcc/corrupt-read.ts logs it with its key and revision), and the
 *   CORRUPT alarm is raised (`watch` below, on the call that met it).
 * - At start, the corrupt records the store's restore met (it reads every KeyValue) raise the
 *   alarm; with --experimental-initial-corrupt-check (3.6: --feature-gates=InitialCorruptCheck=true)
 *   every record of every bucket is checked first (`initialCheck`).
 * - With --experimental-corrupt-check-time / --corrupt-check-time above zero, every record is checked
 *   again at that period (`periodicCheck`, a supervised loop on Effect's Clock).
 * - While CORRUPT is up, Put, DeleteRange, a Txn that writes, Compact, LeaseGrant and LeaseRevoke
 *   fail with "etcdserver: corrupt cluster" (DataLoss), as etcd's applierV3Corrupt; Range and
 *   read-only Txns still run (etcd serves them outside the applier). The lessor's own revocations
 *   of expired leases are refused too (server.ts hands it `up`): their keys stay until the alarm
 *   is lifted, as etcd's lessor proposes a LeaseRevoke that applierV3Corrupt refuses.
 *   `etcdctl alarm disarm` lifts it.
 */
import { Duration, Effect, Exit, Schedule } from "effect"
import type { BackendShape, CorruptRecord } from "../backend/backend.js"
import { type EtcdError, Errors, GrpcCode } from "../errors.js"
import { describeCorrupt } from "../mvcc/corrupt-read.js"
import { supervised } from "../supervision/fatal.js"
import { type Alarms, AlarmType } from "./alarms.js"

export interface CorruptGuard {
  /** CORRUPT is up: writes are refused. Plain: read on every write call. */
  readonly up: () => boolean
  /** A write's refusal under CORRUPT. */
  readonly refuse: () => Exit.Exit<never, EtcdError>
  /** Raises CORRUPT for this member (once; logged with `why`). */
  readonly raise: (why: string) => Effect.Effect<void>
  /** A read's outcome: when it met a corrupt record (DataLoss), the alarm is raised before it fails. */
  readonly watch: <A>(exit: Exit.Exit<A, EtcdError>) => Effect.Effect<A, EtcdError>
}

export const makeCorruptGuard = (alarms: Alarms, memberId: bigint): CorruptGuard => {
  const memberID = memberId.toString()
  const raise = (why: string): Effect.Effect<void> =>
    alarms.activate(memberID, AlarmType.CORRUPT).pipe(
      Effect.flatMap((raised) =>
        raised === undefined ? Effect.void : Effect.logError(`alarm raised: CORRUPT (${why})`)
      ),
      // the alarm record could not be written (the backend failed): say so; the member is stopping anyway
      Effect.catchAll((e) => Effect.logError(`cannot raise the CORRUPT alarm (${why}): ${e.message}`))
    )
  return {
    up: alarms.corrupt,
    refuse: () => Exit.fail(Errors.corrupt()),
    raise,
    watch: (exit) =>
      Exit.isFailure(exit) && exit.cause._tag === "Fail" && exit.cause.error.code === GrpcCode.DataLoss
        ? Effect.zipRight(raise("a read met a corrupt record"), exit)
        : exit
  }
}

const logFound = (found: ReadonlyArray<CorruptRecord>): Effect.Effect<void> =>
  Effect.forEach(found, (c) => Effect.logError(`backend: ${describeCorrupt(c)}`), { discard: true })

/** Raises CORRUPT when `found` is not empty. */
const report = (guard: CorruptGuard, found: ReadonlyArray<CorruptRecord>, what: string): Effect.Effect<void> =>
  found.length === 0
    ? Effect.void
    : Effect.zipRight(logFound(found), guard.raise(`${found.length} corrupt record(s) found by the ${what}`))

/**
 * At start: with `full` (the initial-corrupt-check switch) every record is checked; either way the
 * corrupt records met so far (the store's restore reads every KeyValue) raise the alarm.
 */
export const initialCheck = (backend: BackendShape, guard: CorruptGuard, full: boolean): Effect.Effect<void> =>
  Effect.gen(function* () {
    if (full) {
      yield* Effect.logInfo("initial corruption check: checking every stored record")
      const bad = yield* Effect.catchAll(backend.verify, (e) =>
        Effect.as(Effect.logError(`initial corruption check failed: ${e.message}`), [])
      )
      yield* Effect.logInfo(
        `initial corruption check: ${bad.length === 0 ? "no corruption found" : `${bad.length} corrupt record(s)`}`
      )
    }
    yield* report(guard, backend.corruptions(), full ? "initial corruption check" : "store's restore")
  })

/** Every `period`, every record is checked; a corrupt one raises CORRUPT. Runs until its scope closes. */
export const periodicCheck = (
  backend: BackendShape,
  guard: CorruptGuard,
  period: Duration.Duration
): Effect.Effect<void> =>
  supervised(
    "corruption check loop",
    Effect.gen(function* () {
      const bad = yield* backend.verify
      yield* report(guard, bad, "periodic corruption check")
    }).pipe(Effect.repeat(Schedule.spaced(period)), Effect.delay(period))
  )
