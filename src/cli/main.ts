#!/usr/bin/env node
/**
 * The `etcd-effect` program. Start-up problems print one line on stderr and exit 1; SIGINT and
 * SIGTERM interrupt the main fiber, so every scope (server, store, backend) closes in order.
 */
import { Command, ValidationError } from "@effect/cli"
// Submodules, not the package index: the index loads the HTTP stack too and doubles start-up time.
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Cause, Console, Effect } from "effect"
import { clientCommands } from "./commands/index.js"
import { apiserver } from "./apiserver.js"
import { serve } from "./serve.js"

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

const root = Command.make("etcd-effect").pipe(
  Command.withDescription("etcd's v3 API and watch, on Effect"),
  Command.withSubcommands([serve, apiserver, ...clientCommands])
)

const cli = Command.run(root, { name: "etcd-effect", version: "0.1.0" })

const describe = (error: unknown): string => {
  if (typeof error === "object" && error !== null && "message" in error && typeof error.message === "string") {
    return error.message
  }
  return String(error)
}

cli(process.argv).pipe(
  // @effect/cli has already printed its own validation errors; everything else gets one line.
  Effect.tapErrorCause((cause) => {
    const failure = Cause.failureOption(cause)
    if (failure._tag === "Some" && ValidationError.isValidationError(failure.value)) return Effect.void
    if (Cause.isInterruptedOnly(cause)) return Effect.void
    return Console.error(`etcd-effect: ${failure._tag === "Some" ? describe(failure.value) : Cause.pretty(cause)}`)
  }),
  Effect.provide(NodeContext.layer),
  NodeRuntime.runMain({ disableErrorReporting: true, disablePrettyLogger: true })
)
