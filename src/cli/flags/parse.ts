/**
 * Reading a command line as etcdctl (cobra and pflag) reads it, against the table (table.ts):
 *
 * - the command is found as cobra finds it: the words that are not flags (a flag that takes a
 *   value and has no `=` takes the next word with it) name a command and then a subcommand; an
 *   unknown first word is `unknown command "x" for "etcd-effect"`;
 * - then every word is read as pflag reads it, flags anywhere (before the command too):
 *   `--flag=value`, `--flag value`, `--bool`, `--bool=false`, `-w json`, `-w=json`, `-wjson`,
 *   `-hw json`, and `--` before words that start with `-`; an unknown flag is
 *   `unknown flag: --prefx`, a bad value names its flag and says why as Go would;
 * - then the environment: the global flags from ETCDCTL_<NAME> and serve's from ETCD_<NAME>, a
 *   variable shadowed by its flag is an error and an unknown one a warning, as etcd's pkg/flags.
 *
 * Nothing here runs anything: the result says what to run, or the error line and exit code.
 */
import type { CommandSpec, Dialect } from "./command.js"
import { commandName } from "./command.js"
import type { Flag, FlagSet } from "./flag.js"
import { goQuote, ValueError } from "./go-values.js"
import { globalFlags, helpFlag, PROGRAM, root } from "./table.js"

export interface ParsedRun {
  readonly _tag: "run"
  readonly command: CommandSpec
  /** every flag of the command by name: its value, or its default */
  readonly values: Readonly<Record<string, unknown>>
  /** the flags given, on the command line or by the environment */
  readonly set: ReadonlySet<string>
  /** the words that are not flags, in order */
  readonly args: ReadonlyArray<string>
  /** how many of `args` came before a `--` (-1: there was none) */
  readonly dashAt: number
  readonly warnings: ReadonlyArray<string>
}

export interface ParsedHelp {
  readonly _tag: "help"
  readonly command: CommandSpec
  /** a line before the help (cobra's "Unknown help topic") */
  readonly note?: string | undefined
  readonly warnings: ReadonlyArray<string>
}

export interface ParsedError {
  readonly _tag: "error"
  /** what to print on stderr */
  readonly lines: ReadonlyArray<string>
  readonly exitCode: number
}

export type Parsed = ParsedRun | ParsedHelp | ParsedError

/** etcdctl's exit code for a command line it refuses (cobra's errors) */
export const EXIT_ERROR = 1

/** A command's flags: its own, the global ones if it takes them, and -h/--help. */
export const flagsOf = (c: CommandSpec): FlagSet => ({ ...c.flags, ...(c.globals ? globalFlags : {}), help: helpFlag })

const byShort = (flags: FlagSet): Map<string, string> => {
  const m = new Map<string, string>()
  for (const [name, f] of Object.entries(flags)) if (f.short !== undefined) m.set(f.short, name)
  return m
}

/** cobra's stripFlags: the words that are not flags nor a flag's value, up to a `--`. */
const stripFlags = (args: ReadonlyArray<string>, flags: FlagSet, shorts: Map<string, string>): Array<string> => {
  const words: Array<string> = []
  const takesValue = (f: Flag<unknown> | undefined) => f === undefined || f.noOptDefVal === undefined
  for (let i = 0; i < args.length; i++) {
    const s = args[i]!
    if (s === "--") break
    const long = s.startsWith("--") && !s.includes("=") && takesValue(flags[s.slice(2)])
    const short = s.startsWith("-") && !s.includes("=") && s.length === 2 && takesValue(flags[shorts.get(s[1]!) ?? ""])
    if (long || short) {
      // cobra: with at most one word left the flag keeps it, and the search ends
      if (args.length - (i + 1) <= 1) break
      i++
      continue
    }
    if (s !== "" && !s.startsWith("-")) words.push(s)
  }
  return words
}

/** cobra's Find: the command the words name, and the words without its name. */
const find = (c: CommandSpec, args: ReadonlyArray<string>): { command: CommandSpec; args: ReadonlyArray<string> } => {
  const flags = flagsOf(c)
  const words = stripFlags(args, flags, byShort(flags))
  if (words.length === 0 || c.subcommands === undefined) return { command: c, args }
  const next = c.subcommands.find((s) => commandName(s) === words[0])
  if (next === undefined) return { command: c, args }
  const at = args.indexOf(words[0]!)
  return find(next, [...args.slice(0, at), ...args.slice(at + 1)])
}

/** How a flag is named in pflag's "invalid argument" line. */
const shownName = (name: string, f: Flag<unknown>) => (f.short === undefined ? `--${name}` : `-${f.short}, --${name}`)

/** The error line of a value a flag refuses, in the command's dialect. */
const invalidValue = (dialect: Dialect, name: string, f: Flag<unknown>, value: string, e: ValueError): string => {
  if (e.whole) return e.reason
  if (dialect === "pflag")
    return `invalid argument ${goQuote(value)} for ${goQuote(shownName(name, f))} flag: ${e.reason}`
  if (f.kind === "bool") return `invalid boolean value ${goQuote(value)} for --${name}: parse error`
  if (f.kind === "choice" || f.kind === "string")
    return `invalid value ${goQuote(value)} for flag --${name}: ${e.reason}`
  return `invalid value ${goQuote(value)} for flag --${name}: ${e.range ? "value out of range" : "parse error"}`
}

class FlagError {
  constructor(readonly message: string) {}
}

/** The flag values of one reading: defaults, then what the command line and environment set. */
class Values {
  readonly values: Record<string, unknown> = {}
  readonly set = new Set<string>()

  constructor(
    private readonly flags: FlagSet,
    private readonly dialect: Dialect
  ) {
    for (const [name, f] of Object.entries(flags)) this.values[name] = f.default
  }

  /** pflag's Set: the text read by the flag's kind; a slice's second use appends. */
  apply(name: string, text: string, describe?: (e: ValueError) => string): void {
    const f = this.flags[name]!
    const v = f.parse(text)
    if (v instanceof ValueError) {
      throw new FlagError(describe === undefined ? invalidValue(this.dialect, name, f, text, v) : describe(v))
    }
    this.values[name] =
      f.appends === true && this.set.has(name)
        ? [...(this.values[name] as Array<unknown>), ...(v as Array<unknown>)]
        : v
    this.set.add(name)
  }
}

/** pflag's parseLongArg (and Go flag's, which also takes `-name`) */
const longArg = (
  s: string,
  rest: Array<string>,
  flags: FlagSet,
  values: Values,
  dialect: Dialect,
  dashes: number
): void => {
  const body = s.slice(dashes)
  if (body.length === 0 || body[0] === "-" || body[0] === "=") throw new FlagError(`bad flag syntax: ${s}`)
  const eq = body.indexOf("=")
  const name = eq < 0 ? body : body.slice(0, eq)
  const f = Object.hasOwn(flags, name) ? flags[name] : undefined
  if (f === undefined) throw new FlagError(`unknown flag: --${name}`)
  let value: string
  if (eq >= 0) value = body.slice(eq + 1)
  else if (f.noOptDefVal !== undefined) value = f.noOptDefVal
  else if (rest.length > 0) value = rest.shift()!
  else throw new FlagError(`flag needs an argument: ${dialect === "goflag" ? `--${name}` : s}`)
  values.apply(name, value)
}

/** Go's %q of one byte, as pflag words an unknown shorthand */
const quoteChar = (c: string): string => `'${c === "'" ? "\\'" : goQuote(c).slice(1, -1)}'`

/** pflag's parseShortArg: `-w json`, `-w=json`, `-wjson`, `-hw json` */
const shortArg = (s: string, rest: Array<string>, flags: FlagSet, shorts: Map<string, string>, values: Values) => {
  let shorthands = s.slice(1)
  while (shorthands.length > 0) {
    const c = shorthands[0]!
    const name = shorts.get(c)
    if (name === undefined) throw new FlagError(`unknown shorthand flag: ${quoteChar(c)} in -${shorthands}`)
    const f = flags[name]!
    let value: string
    let next = shorthands.slice(1)
    if (shorthands.length > 2 && shorthands[1] === "=") {
      value = shorthands.slice(2)
      next = ""
    } else if (f.noOptDefVal !== undefined) value = f.noOptDefVal
    else if (shorthands.length > 1) {
      value = shorthands.slice(1)
      next = ""
    } else if (rest.length > 0) value = rest.shift()!
    else throw new FlagError(`flag needs an argument: ${quoteChar(c)} in -${shorthands}`)
    values.apply(name, value)
    shorthands = next
  }
}

/** etcd's pkg/flags: FlagToEnv */
export const envName = (prefix: string, flag: string): string => `${prefix}_${flag.toUpperCase().replace(/-/g, "_")}`

/** etcd's SetFlagsFromEnv + verifyEnv for the flags read from `prefix`_…; warnings for unknown variables. */
const fromEnv = (
  prefix: string,
  names: ReadonlyArray<string>,
  values: Values,
  env: NodeJS.ProcessEnv,
  warnings: Array<string>
): void => {
  const used = new Set<string>()
  for (const name of names) {
    const key = envName(prefix, name)
    const text = env[key]
    if (text === undefined || text === "") continue
    used.add(key)
    if (values.set.has(name)) {
      throw new FlagError(
        `conflicting environment variable ${JSON.stringify(key)} is shadowed by corresponding command-line flag (either unset environment variable or disable flag)`
      )
    }
    values.apply(name, text, (e) => `invalid value ${goQuote(text)} for ${key}: ${e.reason}`)
  }
  for (const [key, text] of Object.entries(env)) {
    // ETCDCTL_API picks etcdctl's v2 or v3 command line; etcdctl drops it before reading the others
    if (!key.startsWith(`${prefix}_`) || used.has(key) || key === "ETCDCTL_API" || text === "") continue
    if (names.some((n) => envName(prefix, n) === key)) continue
    warnings.push(`unrecognized environment variable ${key}=${text}`)
  }
}

/** Reads the words after the program (process.argv.slice(2)) with `env` (process.env). */
export const parseCommandLine = (argv: ReadonlyArray<string>, env: NodeJS.ProcessEnv): Parsed => {
  const found = find(root, argv)
  const command = found.command
  const flags = flagsOf(command)
  const shorts = byShort(flags)
  if (command === root) {
    const words = stripFlags(argv, flags, shorts)
    if (words.length > 0) {
      return {
        _tag: "error",
        lines: [
          `Error: unknown command ${goQuote(words[0]!)} for ${goQuote(PROGRAM)}`,
          `Run '${PROGRAM} --help' for usage.`
        ],
        exitCode: EXIT_ERROR
      }
    }
  }
  const values = new Values(flags, command.dialect)
  const args: Array<string> = []
  let dashAt = -1
  const warnings: Array<string> = []
  try {
    const rest = [...found.args]
    while (rest.length > 0) {
      const s = rest.shift()!
      if (s.length <= 1 || s[0] !== "-") {
        args.push(s)
        continue
      }
      if (s === "--") {
        dashAt = args.length
        args.push(...rest)
        break
      }
      if (s[1] === "-") longArg(s, rest, flags, values, command.dialect, 2)
      else if (command.dialect === "goflag") longArg(s, rest, flags, values, command.dialect, 1)
      else shortArg(s, rest, flags, shorts, values)
    }
    if (values.values["help"] === true) return { _tag: "help", command, warnings }
    if (command.subcommands !== undefined && command !== root) return { _tag: "help", command, warnings }
    if (command === root) return { _tag: "help", command, warnings }
    if (command.globals) fromEnv("ETCDCTL", Object.keys(globalFlags), values, env, warnings)
    if (command.envPrefix !== undefined) {
      // etcd: a config file (its flag, else $ETCD_CONFIG_FILE) replaces the environment
      const file = command.configFileFlag
      const fromVariable = file === undefined ? undefined : env[envName(command.envPrefix, file)]
      if (file !== undefined && !values.set.has(file) && fromVariable !== undefined && fromVariable !== "") {
        values.apply(file, fromVariable)
      }
      if (file === undefined || !values.set.has(file)) {
        fromEnv(command.envPrefix, Object.keys(command.flags), values, env, warnings)
      }
    }
  } catch (e) {
    if (e instanceof FlagError) return { _tag: "error", lines: [`Error: ${e.message}`], exitCode: EXIT_ERROR }
    throw e
  }
  if (command.path === "help") return helpTopic(args, warnings)
  return { _tag: "run", command, values: values.values, set: values.set, args, dashAt, warnings }
}

/** `help [command…]`: that command's help, or cobra's "Unknown help topic" and the program's. */
const helpTopic = (words: ReadonlyArray<string>, warnings: Array<string>): ParsedHelp => {
  let c = root
  for (const w of words) {
    const next = c.subcommands?.find((s) => commandName(s) === w)
    if (next === undefined) return { _tag: "help", command: root, note: `Unknown help topic [\`${w}\`]`, warnings }
    c = next
  }
  return { _tag: "help", command: c, warnings }
}
