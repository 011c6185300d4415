/**
 * etcd's "alarm" bucket (schema/alarm.go): one key per raised alarm, the marshalled
 * etcdserverpb.AlarmMember { memberID = 1 uint64, alarm = 2 AlarmType }, with an empty value. Ours
 * keeps the list as one JSON record in meta (alarms.ts); a snapshot carries etcd's form both ways.
 */
import type { AlarmMember } from "../alarms.js"

const varint = (out: Array<number>, v: bigint): void => {
  let u = BigInt.asUintN(64, v)
  while (u >= 0x80n) {
    out.push(Number(u & 0x7fn) | 0x80)
    u >>= 7n
  }
  out.push(Number(u))
}

export const encodeAlarmKey = (a: AlarmMember): Uint8Array => {
  const out: Array<number> = []
  if (a.memberID !== "0") {
    out.push(0x08)
    varint(out, BigInt(a.memberID))
  }
  if (a.alarm !== 0) {
    out.push(0x10)
    varint(out, BigInt(a.alarm))
  }
  return Uint8Array.from(out)
}

/** An alarm key back to the AlarmMember; throws when the bytes are not one. */
export const decodeAlarmKey = (b: Uint8Array): AlarmMember => {
  let p = 0
  const read = (): bigint => {
    let v = 0n
    for (let shift = 0n; shift < 70n; shift += 7n) {
      if (p >= b.length) throw new Error("truncated alarm key")
      const x = b[p++]!
      v |= BigInt(x & 0x7f) << shift
      if ((x & 0x80) === 0) return BigInt.asUintN(64, v)
    }
    throw new Error("alarm key varint too long")
  }
  let memberID = 0n
  let alarm = 0n
  while (p < b.length) {
    const tag = read()
    if (tag === 0x08n) memberID = read()
    else if (tag === 0x10n) alarm = read()
    else throw new Error(`unexpected field in alarm key (tag ${tag})`)
  }
  return { memberID: memberID.toString(), alarm: Number(alarm) }
}
