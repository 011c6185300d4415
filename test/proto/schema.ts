/**
 * Test helper: reduces a protobufjs Root to a comparable description (messages, enums, services)
 * and diffs two descriptions into readable mismatch lines. Used by compat.test.ts.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import protobufjs from "protobufjs"

export interface FieldDesc {
  readonly id: number
  /** scalar type name, or the full name of the message/enum type */
  readonly type: string
  readonly repeated: boolean
  readonly oneof: string | undefined
}
export interface MethodDesc {
  readonly requestType: string
  readonly responseType: string
  readonly requestStream: boolean
  readonly responseStream: boolean
}
export interface Schema {
  readonly messages: Map<string, Map<string, FieldDesc>>
  /** enum full name → value number → value name */
  readonly enums: Map<string, Map<number, string>>
  readonly services: Map<string, Map<string, MethodDesc>>
}

export const protoFiles = ["rpc", "kv", "auth"] as const
export type ProtoSources = Record<(typeof protoFiles)[number], string>

export const readSources = (dir: string): ProtoSources => ({
  rpc: readFileSync(join(dir, "rpc.proto"), "utf8"),
  kv: readFileSync(join(dir, "kv.proto"), "utf8"),
  auth: readFileSync(join(dir, "auth.proto"), "utf8")
})

/** Loads dir/rpc.proto through its import statements (proves they resolve). */
export const loadRoot = (dir: string): protobufjs.Root => {
  const root = new protobufjs.Root().loadSync(join(dir, "rpc.proto"), { keepCase: true })
  root.resolveAll()
  return root
}

/** Parses in-memory sources (e.g. a deliberately altered copy) into one Root. */
export const rootFromSources = (src: ProtoSources): protobufjs.Root => {
  const root = new protobufjs.Root()
  for (const file of ["kv", "auth", "rpc"] as const) protobufjs.parse(src[file], root, { keepCase: true })
  root.resolveAll()
  return root
}

const typeName = (f: protobufjs.Field): string =>
  f.resolvedType === null ? f.type : f.resolvedType.fullName.replace(/^\./, "")

export const describeRoot = (root: protobufjs.Root): Schema => {
  const schema: Schema = { messages: new Map(), enums: new Map(), services: new Map() }
  const walk = (ns: protobufjs.NamespaceBase): void => {
    for (const obj of ns.nestedArray) {
      const name = obj.fullName.replace(/^\./, "")
      if (obj instanceof protobufjs.Type) {
        schema.messages.set(
          name,
          new Map(obj.fieldsArray.map((f) => [f.name, {
            id: f.id,
            type: typeName(f),
            repeated: f.repeated,
            oneof: f.partOf?.name
          }]))
        )
      } else if (obj instanceof protobufjs.Enum) {
        schema.enums.set(name, new Map(Object.entries(obj.values).map(([k, v]) => [v, k])))
      } else if (obj instanceof protobufjs.Service) {
        schema.services.set(
          name,
          new Map(obj.methodsArray.map((m) => [m.name, {
            requestType: m.resolvedRequestType!.fullName.replace(/^\./, ""),
            responseType: m.resolvedResponseType!.fullName.replace(/^\./, ""),
            requestStream: m.requestStream === true,
            responseStream: m.responseStream === true
          }]))
        )
      }
      if (obj instanceof protobufjs.Namespace) walk(obj) // Type and Service extend Namespace too
    }
  }
  walk(root)
  return schema
}

/** etcd3's copy spells enum values UpperCamelCase (NotEqual); etcd spells them NOT_EQUAL. */
const enumKey = (name: string): string => name.toLowerCase().replace(/_/g, "")

/**
 * Every difference between two schemas, one line each. "ours"/"theirs" say which side has a
 * thing the other lacks; for a differing property both values are shown as ours → theirs.
 */
export const diffSchemas = (ours: Schema, theirs: Schema): Array<string> => {
  const out: Array<string> = []
  const sides = <V>(kind: string, a: Map<string, V>, b: Map<string, V>, both: (name: string, x: V, y: V) => void) => {
    for (const [name, x] of a) {
      const y = b.get(name)
      if (y === undefined) out.push(`${kind} ${name}: only in ours`)
      else both(name, x, y)
    }
    for (const name of b.keys()) if (!a.has(name)) out.push(`${kind} ${name}: only in theirs`)
  }
  const props = <T extends object>(what: string, x: T, y: T) => {
    for (const key of Object.keys(x) as Array<keyof T>) {
      if (x[key] !== y[key]) out.push(`${what}: ${String(key)} ${String(x[key])} → ${String(y[key])}`)
    }
  }
  sides("message", ours.messages, theirs.messages, (msg, a, b) =>
    sides("field", prefixed(msg, a), prefixed(msg, b), (name, x, y) => props(`field ${name}`, x, y)))
  sides("enum", ours.enums, theirs.enums, (name, a, b) => {
    const keyed = (m: Map<number, string>) => new Map([...m].map(([n, v]) => [enumKey(v) + "=" + n, v]))
    sides(`value of ${name}`, keyed(a), keyed(b), () => {})
  })
  sides("service", ours.services, theirs.services, (svc, a, b) =>
    sides("method", prefixed(svc, a), prefixed(svc, b), (name, x, y) => props(`method ${name}`, x, y)))
  return out
}

const prefixed = <V>(prefix: string, m: Map<string, V>): Map<string, V> =>
  new Map([...m].map(([k, v]) => [`${prefix}.${k}`, v]))
