/**
 * The user and role records persisted in the backend's "authUsers" and "authRoles" buckets (keyed
 * by name), and the "auth" bucket's two keys: the enabled flag and the auth revision — etcd's
 * authpb.User / authpb.Role and its enableFlagKey / revisionKey. Records are JSON (bytes as
 * base64); the "auth" values are etcd's: one byte 0/1, the revision as 8 big-endian bytes.
 */
import type { Permission } from "./range-perm.js"

export interface UserRecord {
  readonly name: string
  /** the bcrypt hash; empty with noPassword */
  readonly password: string
  /** sorted, as etcd keeps them */
  readonly roles: ReadonlyArray<string>
  readonly noPassword: boolean
}

export interface RoleRecord {
  readonly name: string
  /** sorted by key (stable), as etcd keeps them */
  readonly perms: ReadonlyArray<Permission>
}

export const ENABLED_KEY = new Uint8Array(Buffer.from("authEnabled"))
export const REVISION_KEY = new Uint8Array(Buffer.from("authRevision"))

const utf8 = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, "utf8"))
export const nameKey = utf8

export const encodeUser = (u: UserRecord): Uint8Array =>
  utf8(JSON.stringify({ name: u.name, password: u.password, roles: u.roles, noPassword: u.noPassword }))

export const decodeUser = (b: Uint8Array): UserRecord => {
  const o = JSON.parse(Buffer.from(b).toString("utf8")) as {
    name: string
    password: string
    roles: Array<string>
    noPassword?: boolean
  }
  return { name: o.name, password: o.password, roles: o.roles, noPassword: o.noPassword === true }
}

const b64 = (b: Uint8Array): string => Buffer.from(b).toString("base64")
const unb64 = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, "base64"))

export const encodeRole = (r: RoleRecord): Uint8Array =>
  utf8(
    JSON.stringify({
      name: r.name,
      perms: r.perms.map((p) => ({ type: p.permType, key: b64(p.key), rangeEnd: b64(p.rangeEnd) }))
    })
  )

export const decodeRole = (b: Uint8Array): RoleRecord => {
  const o = JSON.parse(Buffer.from(b).toString("utf8")) as {
    name: string
    perms: Array<{ type: number; key: string; rangeEnd: string }>
  }
  return {
    name: o.name,
    perms: o.perms.map((p) => ({ permType: p.type, key: unb64(p.key), rangeEnd: unb64(p.rangeEnd) }))
  }
}

export const encodeRevision = (rev: number): Uint8Array => {
  const b = Buffer.alloc(8)
  b.writeBigUInt64BE(BigInt(rev))
  return new Uint8Array(b)
}

export const decodeRevision = (b: Uint8Array | undefined): number =>
  b === undefined || b.length !== 8 ? 0 : Number(Buffer.from(b).readBigUInt64BE(0))
