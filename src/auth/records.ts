/**
 * The user and role records persisted in the backend's "authUsers" and "authRoles" buckets (keyed
 * by name), and the "auth" bucket's two keys: the enabled flag and the auth revision — etcd's
 * authpb.User / authpb.Role and its enableFlagKey / revisionKey. Records are JSON (bytes as
 * base64); the "auth" values are etcd's: one byte 0/1, the revision as 8 big-endian bytes.
 */
import { Either, Schema } from "effect"
import { parseErrorLine } from "../mvcc/recovery-error.js"
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

/** a user record as stored (noPassword absent in records written before it existed) */
const StoredUser = Schema.parseJson(
  Schema.Struct({
    name: Schema.String,
    password: Schema.String,
    roles: Schema.Array(Schema.String),
    noPassword: Schema.optional(Schema.Boolean)
  })
)

const readable = <A, I>(schema: Schema.Schema<A, I>) => {
  const decode = Schema.decodeUnknownEither(schema)
  return (b: Uint8Array): Either.Either<A, string> =>
    Either.mapLeft(decode(Buffer.from(b).toString("utf8")), parseErrorLine)
}

const decodeStoredUser = readable(StoredUser)

/** A stored user record, or why it cannot be read (start-up corruption to the caller). */
export const decodeUser = (b: Uint8Array): Either.Either<UserRecord, string> =>
  Either.map(decodeStoredUser(b), (o) => ({
    name: o.name,
    password: o.password,
    roles: o.roles,
    noPassword: o.noPassword === true
  }))

const b64 = (b: Uint8Array): string => Buffer.from(b).toString("base64")
const unb64 = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, "base64"))

export const encodeRole = (r: RoleRecord): Uint8Array =>
  utf8(
    JSON.stringify({
      name: r.name,
      perms: r.perms.map((p) => ({ type: p.permType, key: b64(p.key), rangeEnd: b64(p.rangeEnd) }))
    })
  )

/** a role record as stored: perms' keys in base64, type etcd's READ 0, WRITE 1, READWRITE 2 (any int32 is kept, as etcd keeps it) */
const StoredRole = Schema.parseJson(
  Schema.Struct({
    name: Schema.String,
    perms: Schema.Array(Schema.Struct({ type: Schema.Int, key: Schema.String, rangeEnd: Schema.String }))
  })
)

const decodeStoredRole = readable(StoredRole)

/** A stored role record, or why it cannot be read (start-up corruption to the caller). */
export const decodeRole = (b: Uint8Array): Either.Either<RoleRecord, string> =>
  Either.map(decodeStoredRole(b), (o) => ({
    name: o.name,
    perms: o.perms.map((p) => ({ permType: p.type, key: unb64(p.key), rangeEnd: unb64(p.rangeEnd) }))
  }))

export const encodeRevision = (rev: number): Uint8Array => {
  const b = Buffer.alloc(8)
  b.writeBigUInt64BE(BigInt(rev))
  return new Uint8Array(b)
}

export const decodeRevision = (b: Uint8Array | undefined): number =>
  b === undefined || b.length !== 8 ? 0 : Number(Buffer.from(b).readBigUInt64BE(0))
