/**
 * Help in etcdctl's compact form, from the table: NAME, USAGE with the program's name, the
 * commands, then one line per flag with its default (`--limit=0`, `--prefix[=false]`) and what it
 * does, and for flags also read from the environment the variable's name. Plain text: no colour,
 * no line over 100 characters (a test holds every help text to that).
 */
import type { CommandSpec } from "./command.js"
import type { FlagSet } from "./flag.js"
import { envName, flagsOf } from "./parse.js"
import { API_VERSION, globalFlags, PROGRAM, PROGRAM_VERSION, root } from "./table.js"

/** the widest left column; a longer flag pushes its own description to the right */
const MAX_LEFT = 38

const flagLines = (flags: FlagSet): Array<string> => {
  const rows = Object.entries(flags)
    .filter(([, f]) => f.hidden !== true)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([name, f]) => [
      `  ${f.short === undefined ? "    " : `-${f.short}, `}--${name}${f.defaultText}`,
      f.description
    ])
  const width = Math.min(MAX_LEFT, Math.max(...rows.map(([left]) => left!.length)))
  return rows.map(([left, text]) => `${left!.padEnd(width)}  ${text}`)
}

const envNote = (prefix: string, example: string): string =>
  `  (each also from $${prefix}_<FLAG_NAME>: --${example} from $${envName(prefix, example)})`

const commandRows = (c: CommandSpec): Array<CommandSpec> =>
  (c.subcommands ?? []).flatMap((s) => (s.subcommands === undefined ? [s] : s.subcommands))

/** The help text of a command (the program's for `root`). */
export const helpText = (c: CommandSpec): string => {
  const out: Array<string> = []
  const words = c === root ? PROGRAM : `${PROGRAM} ${c.path}`
  out.push("NAME:", `  ${words} - ${c.summary}`, "", "USAGE:", `  ${words}${c.usage === "" ? "" : ` ${c.usage}`}`, "")
  if (c.details !== undefined) out.push(...c.details.map((l) => `  ${l}`), "")
  if (c === root) out.push("VERSION:", `  ${PROGRAM_VERSION}`, "", "API VERSION:", `  ${API_VERSION}`, "")
  const rows = commandRows(c)
  if (rows.length > 0) {
    const width = Math.max(...rows.map((s) => s.path.length))
    out.push("COMMANDS:", ...rows.map((s) => `  ${s.path.padEnd(width)}  ${s.summary}`), "")
    out.push(`Run '${PROGRAM} <command> --help' for a command's options.`, "")
  }
  if (c !== root) {
    const own = Object.fromEntries(Object.entries(flagsOf(c)).filter(([name]) => !(c.globals && name in globalFlags)))
    own["help"] = { ...own["help"]!, description: `help for ${c.path.slice(c.path.lastIndexOf(" ") + 1)}` }
    out.push("OPTIONS:")
    if (c.envPrefix !== undefined) out.push(envNote(c.envPrefix, Object.keys(c.flags)[0]!))
    out.push(...flagLines(own), "")
  }
  if (c.globals) {
    out.push(c === root ? "GLOBAL OPTIONS (of the client commands):" : "GLOBAL OPTIONS:")
    out.push(envNote("ETCDCTL", "dial-timeout"), ...flagLines(globalFlags), "")
  }
  return `${out.join("\n")}\n`
}
