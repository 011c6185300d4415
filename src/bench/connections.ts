/**
 * The bench's HTTP/2 connections as scoped resources: opened together (round-robin over the
 * endpoints), each within the dial timeout, closed when the scope closes. A connection that breaks
 * later reports to the run's Breakage, which fails whatever phase is running.
 */
import { Effect, type Scope } from "effect"
import { BenchError } from "./errors.js"
import { GrpcConnection } from "../h2/grpc-client.js"
import type { Breakage } from "./phase.js"

/** How long a connection may take to start speaking HTTP/2 (bounded further by the stall timeout). */
export const DIAL_TIMEOUT_MS = 5000

export const connection = (
  endpoint: string,
  breakage: Breakage,
  dialTimeoutMs: number = DIAL_TIMEOUT_MS
): Effect.Effect<GrpcConnection, BenchError, Scope.Scope> =>
  Effect.acquireRelease(
    // acquireRelease runs this uninterruptibly: the dial timeout is our own timer, and only the
    // wait itself is made interruptible (its canceler closes the half-open connection).
    Effect.interruptible(
      Effect.async<GrpcConnection, BenchError>((resume) => {
        const timer = setTimeout(() => {
          c.close()
          resume(
            Effect.fail(
              new BenchError({
                reason: `cannot connect to ${endpoint}: no HTTP/2 answer within ${dialTimeoutMs / 1000} s (is it a gRPC endpoint?)`
              })
            )
          )
        }, dialTimeoutMs)
        const c = GrpcConnection.open(endpoint, (error) => {
          clearTimeout(timer)
          resume(
            error === undefined
              ? Effect.succeed(c)
              : Effect.fail(new BenchError({ reason: `cannot connect to ${endpoint}: ${error}` }))
          )
        })
        return Effect.sync(() => {
          clearTimeout(timer)
          c.close()
        })
      })
    ).pipe(Effect.tap((c) => Effect.sync(() => c.onFailure(breakage.report)))),
    (c) => Effect.sync(() => c.close())
  )

/** `n` connections, the i-th to endpoints[i % endpoints.length]. */
export const connections = (
  endpoints: ReadonlyArray<string>,
  n: number,
  breakage: Breakage,
  stallTimeoutMs: number
): Effect.Effect<ReadonlyArray<GrpcConnection>, BenchError, Scope.Scope> =>
  Effect.forEach(
    Array.from({ length: n }, (_, i) => endpoints[i % endpoints.length]!),
    (endpoint) => connection(endpoint, breakage, Math.min(DIAL_TIMEOUT_MS, stallTimeoutMs)),
    { concurrency: "unbounded" }
  )
