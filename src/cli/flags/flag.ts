/**
 * A flag of the `etcd-effect` program, declared once (the tables: client-flags.ts, serve-flags.ts,
 * apiserver-flags.ts, bench-flags.ts) and read by both the bin's lean path and the full program:
 * its kind decides how a text becomes its value (Go's rules, go-values.ts), its default and
 * description make its help line (help.ts).
 */
import {
  formatDuration,
  goQuote,
  parseBool,
  parseCsv,
  parseDurationMillis,
  parseInt,
  parseUint,
  ValueError
} from "./go-values.js"

export type FlagKind = "bool" | "string" | "strings" | "int" | "int64" | "uint" | "duration" | "choice"

export interface Flag<A> {
  readonly kind: FlagKind
  /** one letter: `-w` */
  readonly short?: string | undefined
  readonly description: string
  readonly default: A
  /** the default as help shows it, etcdctl's way: `="l"`, `[=false]`, `=0`, `=2s`, `=[127.0.0.1:2379]` */
  readonly defaultText: string
  /** pflag's NoOptDefVal: the value of the flag given alone (booleans: "true"); such a flag never takes the next word */
  readonly noOptDefVal?: string | undefined
  readonly parse: (text: string) => A | ValueError
  /** pflag string slices: the first use replaces the default, the next ones append */
  readonly appends?: boolean | undefined
  /** a flag its command still serves but help does not show */
  readonly hidden?: boolean | undefined
}

export type FlagSet = Readonly<Record<string, Flag<any>>>

/** The values of a flag set, by flag name. */
export type ValuesOf<S extends FlagSet> = { readonly [K in keyof S]: S[K] extends Flag<infer A> ? A : never }

interface Common {
  readonly description: string
  readonly short?: string | undefined
  readonly hidden?: boolean | undefined
  /** what help shows as the default when the value itself says little ("<name>.etcd") */
  readonly shownDefault?: string | undefined
}

/** a flag's help default: the given text, or the value's own */
const shown = (o: Common, own: string): string => (o.shownDefault === undefined ? own : `=${o.shownDefault}`)

export const bool = (o: Common & { readonly default?: boolean }): Flag<boolean> => ({
  ...o,
  kind: "bool",
  default: o.default ?? false,
  defaultText: shown(o, `[=${o.default ?? false}]`),
  noOptDefVal: "true",
  parse: parseBool
})

export const string = (o: Common & { readonly default?: string }): Flag<string> => ({
  ...o,
  kind: "string",
  default: o.default ?? "",
  defaultText: shown(o, `=${goQuote(o.default ?? "")}`),
  parse: (text) => text
})

/**
 * A string that is one of `choices`; `invalid` words a refused one (etcd's own texts), `reason` says
 * why after the flag's name (etcd's SelectiveStringValue: "invalid value"), else pflag's reason.
 */
export const choice = <const C extends string>(
  o: Common & {
    readonly choices: ReadonlyArray<C>
    readonly default: C
    readonly invalid?: (text: string) => string
    readonly reason?: string
  }
): Flag<C> => ({
  description: o.description,
  short: o.short,
  hidden: o.hidden,
  kind: "choice",
  default: o.default,
  defaultText: shown(o, `=${goQuote(o.default)}`),
  parse: (text) =>
    (o.choices as ReadonlyArray<string>).includes(text)
      ? (text as C)
      : o.invalid !== undefined
        ? new ValueError(o.invalid(text), false, true)
        : new ValueError(o.reason ?? `must be one of ${o.choices.join(", ")}`)
})

/** etcd's types.NewURLs check of one URL: its reason, or undefined when etcd takes it. */
export const checkEtcdUrl = (url: string): string | undefined => {
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)(.*)$/.exec(url)
  if (m === null || !["http", "https", "unix", "unixs"].includes(m[1]!)) {
    return `URL scheme must be http, https, unix, or unixs: ${url}`
  }
  if (!/^(\[[^\]]*\]|[^:[\]]*):[0-9]*$/.test(m[2]!)) return `URL address does not have the form "host:port": ${url}`
  if (/^\/./.test(m[3]!) || m[3] === "/") return `URL must not contain a path: ${url}`
  return undefined
}

/** A comma-separated URL list as etcd's URL flags read it (each URL checked when given), as its text. */
export const urls = (o: Common & { readonly default?: string }): Flag<string> => ({
  ...o,
  kind: "string",
  default: o.default ?? "",
  defaultText: shown(o, `=${goQuote(o.default ?? "")}`),
  parse: (text) => {
    // etcd's URLsValue takes "" as no URLs (`--listen-metrics-urls ""`)
    if (text === "") return text
    for (const url of text.split(",")) {
      const reason = checkEtcdUrl(url)
      if (reason !== undefined) return new ValueError(reason)
    }
    return text
  }
})

export const strings = (o: Common & { readonly default?: ReadonlyArray<string> }): Flag<ReadonlyArray<string>> => ({
  ...o,
  kind: "strings",
  default: o.default ?? [],
  defaultText: shown(o, `=[${(o.default ?? []).join(",")}]`),
  parse: parseCsv,
  appends: true
})

/** Go's int (64 bits), as a number */
export const int = (o: Common & { readonly default?: number }): Flag<number> => ({
  ...o,
  kind: "int",
  default: o.default ?? 0,
  defaultText: shown(o, `=${o.default ?? 0}`),
  parse: (text) => {
    const v = parseInt(text)
    return v instanceof ValueError ? v : Number(v)
  }
})

/** Go's int64, as a bigint (revisions, limits) */
export const int64 = (o: Common & { readonly default?: bigint }): Flag<bigint> => ({
  ...o,
  kind: "int64",
  default: o.default ?? 0n,
  defaultText: shown(o, `=${o.default ?? 0n}`),
  parse: (text) => parseInt(text)
})

/** Go's uint (64 bits), as a number */
export const uint = (o: Common & { readonly default?: number; readonly bits?: number }): Flag<number> => ({
  description: o.description,
  short: o.short,
  hidden: o.hidden,
  kind: "uint",
  default: o.default ?? 0,
  defaultText: shown(o, `=${o.default ?? 0}`),
  parse: (text) => {
    const v = parseUint(text, o.bits ?? 64)
    return v instanceof ValueError ? v : Number(v)
  }
})

/** Go's time.Duration, in milliseconds; the default as Go writes it ("2s") */
export const duration = (o: Common & { readonly default: string }): Flag<number> => {
  const value = parseDurationMillis(o.default)
  if (value instanceof ValueError) throw new Error(`bad default duration ${o.default}`)
  return {
    description: o.description,
    short: o.short,
    hidden: o.hidden,
    kind: "duration",
    default: value,
    defaultText: shown(o, `=${formatDuration(value)}`),
    parse: parseDurationMillis
  }
}
