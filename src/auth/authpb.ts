/**
 * etcd's authpb.User and authpb.Role, the values of its "authUsers" and "authRoles" buckets, to
 * and from our records (records.ts keeps JSON): a snapshot in etcd's format carries etcd's bytes.
 *
 *   User { name = 1 bytes, password = 2 bytes, roles = 3 repeated string, options = 4 { no_password = 1 bool } }
 *   Role { name = 1 bytes, keyPermission = 2 repeated Permission { permType = 1 enum, key = 2 bytes, range_end = 3 bytes } }
 *
 * Fields in number order, empty ones omitted, as gogo marshals them; unknown fields are skipped.
 */
import type { RoleRecord, UserRecord } from "./records.js"

const varint = (out: Array<number>, v: number): void => {
  let u = v >>> 0 === v ? v : Number(BigInt.asUintN(64, BigInt(v)))
  while (u >= 0x80) {
    out.push((u % 0x80) | 0x80)
    u = Math.floor(u / 0x80)
  }
  out.push(u)
}

const bytesField = (out: Array<number>, field: number, b: Uint8Array): void => {
  if (b.length === 0) return
  out.push((field << 3) | 2)
  varint(out, b.length)
  for (const x of b) out.push(x)
}

const utf8 = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, "utf8"))

export const encodeUserPb = (u: UserRecord): Uint8Array => {
  const out: Array<number> = []
  bytesField(out, 1, utf8(u.name))
  bytesField(out, 2, utf8(u.password))
  for (const r of u.roles) {
    out.push((3 << 3) | 2)
    const b = utf8(r)
    varint(out, b.length)
    for (const x of b) out.push(x)
  }
  if (u.noPassword) bytesField(out, 4, Uint8Array.of(0x08, 0x01))
  return Uint8Array.from(out)
}

export const encodeRolePb = (r: RoleRecord): Uint8Array => {
  const out: Array<number> = []
  bytesField(out, 1, utf8(r.name))
  for (const p of r.perms) {
    const perm: Array<number> = []
    if (p.permType !== 0) {
      perm.push(0x08)
      varint(perm, p.permType)
    }
    bytesField(perm, 2, p.key)
    bytesField(perm, 3, p.rangeEnd)
    out.push((2 << 3) | 2)
    varint(out, perm.length)
    out.push(...perm)
  }
  return Uint8Array.from(out)
}

type Field = { readonly field: number; readonly int: number; readonly bytes: Uint8Array }

/** The fields of one message, in order; throws on bytes that are not protobuf. */
const fields = (b: Uint8Array): Array<Field> => {
  const out: Array<Field> = []
  let p = 0
  const readVarint = (): number => {
    let v = 0
    let mul = 1
    for (let i = 0; i < 10; i++) {
      if (p >= b.length) throw new Error("truncated varint")
      const x = b[p++]!
      v += (x & 0x7f) * mul
      if ((x & 0x80) === 0) return v
      mul *= 0x80
    }
    throw new Error("varint too long")
  }
  while (p < b.length) {
    const tag = readVarint()
    const field = Math.floor(tag / 8)
    const wire = tag % 8
    if (wire === 0) out.push({ field, int: readVarint(), bytes: new Uint8Array(0) })
    else if (wire === 2) {
      const n = readVarint()
      if (p + n > b.length) throw new Error("truncated field")
      out.push({ field, int: 0, bytes: b.subarray(p, p + n) })
      p += n
    } else if (wire === 1 || wire === 5) p += wire === 1 ? 8 : 4
    else throw new Error(`unsupported wire type ${wire}`)
  }
  if (p > b.length) throw new Error("truncated field")
  return out
}

const text = (b: Uint8Array): string => Buffer.from(b).toString("utf8")

export const decodeUserPb = (b: Uint8Array): UserRecord => {
  let name = ""
  let password = ""
  const roles: Array<string> = []
  let noPassword = false
  for (const f of fields(b)) {
    if (f.field === 1) name = text(f.bytes)
    else if (f.field === 2) password = text(f.bytes)
    else if (f.field === 3) roles.push(text(f.bytes))
    else if (f.field === 4) noPassword = fields(f.bytes).some((o) => o.field === 1 && o.int !== 0)
  }
  return { name, password, roles, noPassword }
}

export const decodeRolePb = (b: Uint8Array): RoleRecord => {
  let name = ""
  const perms: Array<RoleRecord["perms"][number]> = []
  for (const f of fields(b)) {
    if (f.field === 1) name = text(f.bytes)
    else if (f.field === 2) {
      let permType = 0
      let key = new Uint8Array(0)
      let rangeEnd = new Uint8Array(0)
      for (const g of fields(f.bytes)) {
        if (g.field === 1) permType = g.int
        else if (g.field === 2) key = Uint8Array.from(g.bytes)
        else if (g.field === 3) rangeEnd = Uint8Array.from(g.bytes)
      }
      perms.push({ permType, key, rangeEnd })
    }
  }
  return { name, perms }
}
