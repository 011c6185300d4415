/**
 * `serve`'s logging as etcd's flags configure it: --logger, --log-level (and --debug), --log-outputs
 * and etcd 3.6's --log-format. Without --logger zap (etcd 3.4's default is capnslog) the lines are
 * logfmt; with it (or with etcd 3.6's --log-format, 3.6 having no other logger) they are zap's: JSON
 * objects with `level`, `ts` (etcd 3.6's layout "2006-01-02T15:04:05.000000Z0700": local time,
 * microseconds, "Z" or the offset), `caller`, `msg` and then the
 * fields (Effect's log annotations), or with --log-format console zap's tab-separated console lines
 * (the fields as zap's console encoder writes them, `{"k": "v"}`). Outputs are etcd's: "default"
 * and "stderr" are stderr, "stdout" stdout, anything else a file appended to (opened before the
 * server starts: a path that cannot be opened fails the start, as etcd's "open sink").
 */
import * as fs from "node:fs"
import { Cause, HashMap, Logger, LogLevel } from "effect"

/** etcd's --log-level values (zap's level names) and Effect's levels */
export const logLevels = {
  debug: LogLevel.Debug,
  info: LogLevel.Info,
  warn: LogLevel.Warning,
  error: LogLevel.Error,
  dpanic: LogLevel.Error,
  panic: LogLevel.Fatal,
  fatal: LogLevel.Fatal
} as const

export type LogLevelName = keyof typeof logLevels

export interface LogSettings {
  readonly logger: "zap" | "capnslog"
  readonly format: "json" | "console"
  readonly outputs: ReadonlyArray<string>
}

const zapLevel = (level: LogLevel.LogLevel): string => {
  switch (level._tag) {
    case "Warning":
      return "warn"
    case "Fatal":
      return "fatal"
    case "Error":
      return "error"
    case "Debug":
    case "Trace":
      return "debug"
    default:
      return "info"
  }
}

const messageText = (message: unknown): string => {
  const parts = Array.isArray(message) ? message : [message]
  return parts.map((p) => (typeof p === "string" ? p : JSON.stringify(p))).join(" ")
}

const pad = (n: number, width = 2) => String(n).padStart(width, "0")

/**
 * Go's time layout "2006-01-02T15:04:05.000000Z0700" (etcd 3.6's zap EncodeTime) for `date`, in
 * local time. A Date has milliseconds: the microseconds are the clock's now when it is still in
 * the same millisecond (the logger runs as the record is made), else 000.
 */
export const zapTime = (date: Date, nowMicros = (performance.timeOrigin + performance.now()) * 1000): string => {
  const ms = date.getTime()
  const micros = Math.floor(nowMicros / 1000) === ms ? Math.floor(nowMicros) % 1000 : 0
  const fraction = `${pad(date.getMilliseconds(), 3)}${pad(micros, 3)}`
  const offset = -date.getTimezoneOffset()
  const zone =
    offset === 0
      ? "Z"
      : `${offset > 0 ? "+" : "-"}${pad(Math.floor(Math.abs(offset) / 60))}${pad(Math.abs(offset) % 60)}`
  return (
    `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}` +
    `T${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}` +
    `.${fraction}${zone}`
  )
}

/** JSON as zap's console encoder writes fields: `{"k": "v", "n": [1, 2]}` (a space after `:` and `,`). */
const consoleJson = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(consoleJson).join(", ")}]`
  if (typeof value === "object" && value !== null)
    return `{${Object.entries(value)
      .map(([k, v]) => `${JSON.stringify(k)}: ${consoleJson(v)}`)
      .join(", ")}}`
  return JSON.stringify(value) ?? "null"
}

/** The zap line of one log record (JSON, or console with tabs). */
export const zapLine = (
  format: LogSettings["format"],
  record: {
    readonly level: LogLevel.LogLevel
    readonly date: Date
    readonly message: unknown
    readonly fields: ReadonlyArray<readonly [string, unknown]>
  }
): string => {
  const caller = (record.fields.find(([k]) => k === "caller")?.[1] as string | undefined) ?? "etcd-effect/serve"
  const fields = record.fields.filter(([k]) => k !== "caller")
  const ts = zapTime(record.date)
  const msg = messageText(record.message)
  if (format === "console") {
    const rest = fields.length === 0 ? "" : `\t${consoleJson(Object.fromEntries(fields))}`
    return `${ts}\t${zapLevel(record.level)}\t${caller}\t${msg}${rest}`
  }
  return JSON.stringify({ level: zapLevel(record.level), ts, caller, msg, ...Object.fromEntries(fields) })
}

/** A writer per --log-outputs entry; a file that cannot be opened is etcd's "open sink" error. */
export const openOutputs = (outputs: ReadonlyArray<string>): ReadonlyArray<(line: string) => void> | string => {
  const writers: Array<(line: string) => void> = []
  for (const out of outputs.length === 0 ? ["default"] : outputs) {
    if (out === "default" || out === "stderr") writers.push((l) => process.stderr.write(`${l}\n`))
    else if (out === "stdout") writers.push((l) => process.stdout.write(`${l}\n`))
    else {
      let fd: number
      try {
        fd = fs.openSync(out, "a")
      } catch (e) {
        return `open sink ${JSON.stringify(out)}: ${e instanceof Error ? e.message : String(e)}`
      }
      writers.push((l) => fs.writeSync(fd, `${l}\n`))
    }
  }
  return writers
}

/** The logger of `serve` for these settings, writing to these outputs. */
export const serveLogger = (
  settings: LogSettings,
  writers: ReadonlyArray<(line: string) => void>
): Logger.Logger<unknown, void> => {
  const write = (line: string) => {
    for (const w of writers) w(line)
  }
  if (settings.logger !== "zap") return Logger.map(Logger.logfmtLogger, write)
  return Logger.make(({ annotations, cause, date, logLevel, message }) => {
    const fields: Array<readonly [string, unknown]> = [...HashMap.toEntries(annotations)]
    if (!Cause.isEmpty(cause)) fields.push(["error", Cause.pretty(cause)])
    write(zapLine(settings.format, { level: logLevel, date, message, fields }))
  })
}
