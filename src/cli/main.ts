#!/usr/bin/env node
/**
 * The `etcd-effect` program (the bin, bin.ts, runs it for what its lean path leaves): the command
 * line read with the table (flags/), then the command's Effect. Start-up problems print one line
 * on stderr and exit 1; SIGINT and SIGTERM interrupt the main fiber, so every scope (server,
 * store, backend) closes in order.
 */
// Submodules, not the package index: the index loads the HTTP stack too and doubles start-up time.
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Cause, Console, Effect } from "effect"
import { parseCommandLine, type ParsedRun } from "./flags/parse.js"
import { helpText } from "./flags/help.js"
import { clientCommands } from "./commands/index.js"
import { runApiserver } from "./apiserver.js"
import { runServe } from "./serve.js"
import { API_VERSION, PROGRAM_VERSION } from "./flags/table.js"

// grpc-js gives TLS the endpoint as server name even when it is an IP address, and Node then
// warns (DEP0123) on every TLS connection; etcdctl prints nothing of the kind. Only that one
// warning is dropped.
const emitWarning = process.emitWarning.bind(process) as (...args: Array<unknown>) => void
process.emitWarning = ((...args: Array<unknown>) => {
  const [, type, code] = args
  const c = typeof type === "object" && type !== null && "code" in type ? (type as { code?: unknown }).code : code
  if (c === "DEP0123") return
  emitWarning(...args)
}) as typeof process.emitWarning

const describe = (error: unknown): string => {
  if (typeof error === "object" && error !== null && "message" in error && typeof error.message === "string") {
    return error.message
  }
  return String(error)
}

const commands: Readonly<Record<string, (p: ParsedRun) => Effect.Effect<void, unknown>>> = {
  ...clientCommands,
  serve: runServe,
  apiserver: runApiserver
}

/** What the command line asks for, as one Effect (the bin has printed warnings already). */
const program = (): Effect.Effect<void, unknown> => {
  const parsed = parseCommandLine(process.argv.slice(2), process.env)
  switch (parsed._tag) {
    case "error":
      return Effect.sync(() => {
        for (const line of parsed.lines) console.error(line)
        process.exitCode = parsed.exitCode
      })
    case "help":
      return Effect.sync(() => {
        process.stdout.write(`${parsed.note === undefined ? "" : `${parsed.note}\n`}${helpText(parsed.command)}`)
      })
    case "run": {
      if (parsed.command.path === "version") {
        return Console.log(`etcd-effect version: ${PROGRAM_VERSION}\nAPI version: ${API_VERSION}`)
      }
      const run = commands[parsed.command.path]
      return run === undefined ? Effect.dieMessage(`no handler for ${parsed.command.path}`) : run(parsed)
    }
  }
}

program().pipe(
  Effect.tapErrorCause((cause) => {
    if (Cause.isInterruptedOnly(cause)) return Effect.void
    const failure = Cause.failureOption(cause)
    return Console.error(`etcd-effect: ${failure._tag === "Some" ? describe(failure.value) : Cause.pretty(cause)}`)
  }),
  NodeRuntime.runMain({ disableErrorReporting: true, disablePrettyLogger: true })
)
