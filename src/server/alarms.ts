/**
 * etcd's alarm store (etcdserver/api/v3alarm): the raised alarms, one per (member, type),
 * persisted so that they survive a restart, as etcd keeps them in its "alarm" bucket. Here they
 * are one record in the meta bucket (the list, as JSON: few entries, rarely written).
 *
 * The Maintenance Alarm rpc's actions (etcdserver's apply of AlarmRequest):
 * - GET: every alarm of that type (NONE: all);
 * - ACTIVATE: raise it; answered with the alarm when it is new, nothing when it was up already;
 * - DEACTIVATE: clear it; answered with the alarm when it was up, nothing otherwise.
 * While NOSPACE is up, writes are refused (quota.ts, etcd's applierV3Capped); while CORRUPT is up,
 * every write (corrupt-check.ts, etcd's applierV3Corrupt).
 */
import { Effect, Either, Schema } from "effect"
import type { BackendError, BackendShape } from "../backend/backend.js"
import { parseErrorLine, RecoveryError } from "../mvcc/recovery-error.js"

/** etcdserverpb.AlarmType */
export const AlarmType = { NONE: 0, NOSPACE: 1, CORRUPT: 2 } as const
/** etcdserverpb.AlarmRequest.AlarmAction */
export const AlarmAction = { GET: 0, ACTIVATE: 1, DEACTIVATE: 2 } as const

/** The AlarmType's proto name ("NOSPACE"). */
export const alarmName = (type: number): string =>
  type === AlarmType.NOSPACE
    ? "NOSPACE"
    : type === AlarmType.CORRUPT
      ? "CORRUPT"
      : type === AlarmType.NONE
        ? "NONE"
        : String(type)

export interface AlarmMember {
  /** uint64, as proto-loader's longs: String */
  readonly memberID: string
  readonly alarm: number
}

export const ALARMS_KEY = new Uint8Array(Buffer.from("etcd-effect/alarms", "latin1"))

export interface Alarms {
  readonly list: (type: number) => ReadonlyArray<AlarmMember>
  readonly activate: (memberID: string, type: number) => Effect.Effect<AlarmMember | undefined, BackendError>
  readonly deactivate: (memberID: string, type: number) => Effect.Effect<AlarmMember | undefined, BackendError>
  /** NOSPACE is up (for any member): writes are refused. Plain: read on every write call. */
  readonly noSpace: () => boolean
  /** CORRUPT is up (for any member): writes are refused. Plain, as `noSpace`. */
  readonly corrupt: () => boolean
}

/** the alarms record as stored: a JSON array of { memberID, alarm } */
const StoredAlarms = Schema.parseJson(Schema.Array(Schema.Struct({ memberID: Schema.String, alarm: Schema.Int })))
const decodeStored = Schema.decodeUnknownEither(StoredAlarms)

/**
 * The alarms record; one that does not decode is start-up corruption (etcd panics): dropping it
 * would lift a NOSPACE alarm nobody disarmed.
 */
const decode = (bytes: Uint8Array | undefined): Either.Either<Array<AlarmMember>, RecoveryError> =>
  bytes === undefined
    ? Either.right([])
    : Either.mapBoth(decodeStored(Buffer.from(bytes).toString("utf8")), {
        onLeft: (e) =>
          new RecoveryError({
            reason: "AlarmRecovery",
            message: `the alarms record is unreadable: ${parseErrorLine(e)}`
          }),
        onRight: (a) => [...a]
      })

/** The alarms persisted in `backend`, loaded now. */
export const makeAlarms = (backend: BackendShape): Effect.Effect<Alarms, RecoveryError> =>
  Effect.map(decode(backend.get("meta", ALARMS_KEY)), (loaded) => alarmsFrom(backend, loaded))

const alarmsFrom = (backend: BackendShape, loaded: Array<AlarmMember>): Alarms => {
  let alarms = loaded
  let noSpace = alarms.some((a) => a.alarm === AlarmType.NOSPACE)
  let corrupt = alarms.some((a) => a.alarm === AlarmType.CORRUPT)
  const save = (next: Array<AlarmMember>) =>
    Effect.suspend(() => {
      alarms = next
      noSpace = next.some((a) => a.alarm === AlarmType.NOSPACE)
      corrupt = next.some((a) => a.alarm === AlarmType.CORRUPT)
      return backend.write([
        { bucket: "meta", key: ALARMS_KEY, value: new Uint8Array(Buffer.from(JSON.stringify(next))) }
      ])
    })
  const find = (memberID: string, type: number) => alarms.find((a) => a.memberID === memberID && a.alarm === type)
  return {
    list: (type) => (type === AlarmType.NONE ? alarms : alarms.filter((a) => a.alarm === type)),
    activate: (memberID, type) =>
      Effect.suspend(() => {
        if (find(memberID, type) !== undefined) return Effect.succeed(undefined)
        const m: AlarmMember = { memberID, alarm: type }
        return Effect.as(save([...alarms, m]), m)
      }),
    deactivate: (memberID, type) =>
      Effect.suspend(() => {
        const m = find(memberID, type)
        if (m === undefined) return Effect.succeed(undefined)
        return Effect.as(save(alarms.filter((a) => a !== m)), m)
      }),
    noSpace: () => noSpace,
    corrupt: () => corrupt
  }
}
