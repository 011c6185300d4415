/**
 * etcd's alarm store (etcdserver/api/v3alarm): the raised alarms, one per (member, type),
 * persisted so that they survive a restart, as etcd keeps them in its "alarm" bucket. Here they
 * are one record in the meta bucket (the list, as JSON: few entries, rarely written).
 *
 * The Maintenance Alarm rpc's actions (etcdserver's apply of AlarmRequest):
 * - GET: every alarm of that type (NONE: all);
 * - ACTIVATE: raise it; answered with the alarm when it is new, nothing when it was up already;
 * - DEACTIVATE: clear it; answered with the alarm when it was up, nothing otherwise.
 * While NOSPACE is up, writes are refused (quota.ts, etcd's applierV3Capped).
 */
import { Effect } from "effect"
import type { BackendError, BackendShape } from "../backend/backend.js"

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
}

const decode = (bytes: Uint8Array | undefined): Array<AlarmMember> => {
  if (bytes === undefined) return []
  try {
    const parsed: unknown = JSON.parse(Buffer.from(bytes).toString("utf8"))
    if (!Array.isArray(parsed)) return []
    return parsed.filter(
      (a): a is AlarmMember =>
        typeof a === "object" && a !== null && typeof a.memberID === "string" && typeof a.alarm === "number"
    )
  } catch {
    return []
  }
}

/** The alarms persisted in `backend`, loaded now. */
export const makeAlarms = (backend: BackendShape): Alarms => {
  let alarms = decode(backend.get("meta", ALARMS_KEY))
  let noSpace = alarms.some((a) => a.alarm === AlarmType.NOSPACE)
  const save = (next: Array<AlarmMember>) =>
    Effect.suspend(() => {
      alarms = next
      noSpace = next.some((a) => a.alarm === AlarmType.NOSPACE)
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
    noSpace: () => noSpace
  }
}
