/**
 * etcd's --config-file (and ETCD_CONFIG_FILE): a YAML file of embed.Config's keys. As in etcd, a
 * config file replaces the command line and the ETCD_* variables: its values over the defaults are
 * the whole configuration. The keys are the flags' names (etcd's json tags), except the client TLS
 * flags, which sit under `client-transport-security` (cert-file, key-file, client-cert-auth,
 * trusted-ca-file, auto-tls, …), and the peer ones under `peer-transport-security`. Values have the
 * JSON types etcd decodes them into: booleans, integers, strings (URL lists comma-separated), lists
 * of strings (cipher-suites, log-outputs), and durations as integer nanoseconds (Go's
 * time.Duration in JSON). A value of the wrong type is refused with Go's JSON error, and so is an
 * unknown key (etcd 3.4 and 3.6 ignore one; here a typo is an error, as for flags — issue 25).
 */
import * as fs from "node:fs"
import { parse as parseYaml } from "yaml"
import type { Flag, FlagSet } from "./flags/flag.js"
import { ValueError } from "./flags/go-values.js"

/** the keys of `client-transport-security` and the flags they set */
const CLIENT_TLS_KEYS: Readonly<Record<string, string>> = {
  "cert-file": "cert-file",
  "key-file": "key-file",
  "client-cert-auth": "client-cert-auth",
  "trusted-ca-file": "trusted-ca-file",
  "auto-tls": "auto-tls",
  "crl-file": "client-crl-file",
  "allowed-hostname": "client-cert-allowed-hostname",
  "client-cert-file": "client-cert-file",
  "client-key-file": "client-key-file"
}

/** the keys of `peer-transport-security` and the flags they set */
const PEER_TLS_KEYS: Readonly<Record<string, string>> = {
  "cert-file": "peer-cert-file",
  "key-file": "peer-key-file",
  "client-cert-auth": "peer-client-cert-auth",
  "trusted-ca-file": "peer-trusted-ca-file",
  "auto-tls": "peer-auto-tls",
  "crl-file": "peer-crl-file",
  "allowed-cn": "peer-cert-allowed-cn",
  "allowed-hostname": "peer-cert-allowed-hostname",
  "skip-client-san-verification": "peer-skip-client-san-verification",
  "client-cert-file": "peer-client-cert-file",
  "client-key-file": "peer-client-key-file"
}

/** flags that are not config keys (they say where the config is, or what to print) */
const NOT_KEYS = new Set(["config-file", "version", "help"])

export interface ConfigFileValues {
  readonly values: Record<string, unknown>
  readonly set: ReadonlySet<string>
}

const goType = (v: unknown): string =>
  v === null
    ? "null"
    : Array.isArray(v)
      ? "array"
      : typeof v === "object"
        ? "object"
        : typeof v === "boolean"
          ? "bool"
          : typeof v === "number"
            ? "number"
            : "string"

const wrongType = (key: string, v: unknown, want: string) =>
  `error unmarshaling JSON: while decoding JSON: json: cannot unmarshal ${goType(v)} into Go struct field configYAML.${key} of type ${want}`

/** The flag's value of one YAML value, or etcd's words for a value of the wrong type. */
const valueOf = (key: string, flag: Flag<unknown>, v: unknown): unknown => {
  const text = (() => {
    switch (flag.kind) {
      case "bool":
        return typeof v === "boolean" ? String(v) : wrongType(key, v, "bool")
      case "int":
      case "int64":
      case "uint":
        return typeof v === "number" && Number.isInteger(v) ? String(v) : wrongType(key, v, flag.kind)
      case "duration":
        // time.Duration is an int64 of nanoseconds in JSON
        return typeof v === "number" && Number.isInteger(v) ? `${v}ns` : wrongType(key, v, "time.Duration")
      case "strings":
        return Array.isArray(v) && v.every((s) => typeof s === "string") ? v.join(",") : wrongType(key, v, "[]string")
      default:
        if (key === "cipher-suites" && Array.isArray(v)) return v.join(",")
        return typeof v === "string" ? v : wrongType(key, v, "string")
    }
  })()
  if (text.startsWith("error unmarshaling JSON")) return new ValueError(text, false, true)
  const parsed = flag.parse(text)
  return parsed instanceof ValueError ? new ValueError(`--${key}: ${parsed.reason}`, false, true) : parsed
}

/**
 * Reads the config file at `path` over the flags' defaults: the values and the flags it set, or
 * the error line (a file that cannot be read, YAML that does not parse, a wrong type, an unknown key).
 */
export const readConfigFile = (path: string, flags: FlagSet): ConfigFileValues | string => {
  let doc: unknown
  try {
    doc = parseYaml(fs.readFileSync(path, "utf8"), { version: "1.1" })
  } catch (e) {
    return `error reading config file ${JSON.stringify(path)}: ${e instanceof Error ? e.message : String(e)}`
  }
  const values: Record<string, unknown> = {}
  for (const [name, f] of Object.entries(flags)) values[name] = f.default
  const set = new Set<string>()
  if (doc === null || doc === undefined) return { values, set }
  if (typeof doc !== "object" || Array.isArray(doc)) {
    return `error unmarshaling JSON: while decoding JSON: json: cannot unmarshal ${goType(doc)} into Go value of type embed.configYAML`
  }
  const apply = (key: string, name: string, v: unknown): string | undefined => {
    const value = valueOf(key, flags[name]!, v)
    if (value instanceof ValueError) return value.reason
    values[name] = value
    set.add(name)
    return undefined
  }
  for (const [key, v] of Object.entries(doc as Record<string, unknown>)) {
    const nested =
      key === "client-transport-security"
        ? CLIENT_TLS_KEYS
        : key === "peer-transport-security"
          ? PEER_TLS_KEYS
          : undefined
    if (nested !== undefined) {
      if (v === null) continue
      if (typeof v !== "object" || Array.isArray(v)) return wrongType(key, v, "embed.securityConfig")
      for (const [k, inner] of Object.entries(v as Record<string, unknown>)) {
        const name = nested[k]
        if (name === undefined)
          return `error unmarshaling JSON: while decoding JSON: json: unknown field ${JSON.stringify(k)}`
        const err = apply(k, name, inner)
        if (err !== undefined) return err
      }
      continue
    }
    if (NOT_KEYS.has(key) || !Object.hasOwn(flags, key) || flags[key]!.hidden === true) {
      return `error unmarshaling JSON: while decoding JSON: json: unknown field ${JSON.stringify(key)}`
    }
    if (v === null) continue
    const err = apply(key, key, v)
    if (err !== undefined) return err
  }
  return { values, set }
}
