/**
 * The apiserver's graceful termination (genericapiserver's server.go RunWithContext and
 * lifecycle_signals.go, reduced to one step; Go's http.Server.Shutdown): when the apiserver's scope
 * closes (SIGTERM or SIGINT to `etcd-effect apiserver`), before the request handler is detached and
 * the storages close —
 *
 *   1. ShutdownInitiated: /readyz answers `[-]shutdown failed`, every watch ends cleanly (its chunked
 *      response finished, so client-go's reflector sees the stream end, not a reset connection);
 *   2. the listener closes (new connections are refused) and idle keep-alive connections with it;
 *      answers written from now on carry `Connection: close`;
 *   3. requests in flight finish (a write the client sent is answered and stored), for up to
 *      `shutdownTimeout` (kube-apiserver's 60 s);
 *   4. whatever is still open is closed.
 *
 * Before this, the handler was detached first and every connection destroyed: a controller's
 * request in flight at SIGTERM got a reset connection with its write's outcome unknown.
 */
import { Deferred, Duration, Effect } from "effect"
import type * as Http from "node:http"

export interface ShutdownSignal {
  /** completes when the apiserver begins to shut down */
  readonly initiated: Effect.Effect<void>
  /** whether it has */
  readonly isInitiated: () => boolean
}

export interface GracefulShutdown {
  readonly signal: ShutdownSignal
  /** steps 1–4; run as the scope's first finalizer (added after the server's serve) */
  readonly drain: Effect.Effect<void>
}

/** the shutdown of `node`, tracking its requests from now on */
export const makeGracefulShutdown = (
  node: Http.Server,
  shutdownTimeout: Duration.Duration
): Effect.Effect<GracefulShutdown> =>
  Effect.gen(function* () {
    const initiated = yield* Deferred.make<void>()
    let closing = false
    const inFlight = new Set<Http.ServerResponse>()
    const idle = yield* Deferred.make<void>()
    node.on("request", (_req: Http.IncomingMessage, res: Http.ServerResponse) => {
      if (closing) res.shouldKeepAlive = false
      inFlight.add(res)
      res.once("close", () => {
        inFlight.delete(res)
        if (closing && inFlight.size === 0) Deferred.unsafeDone(idle, Effect.void)
      })
    })
    const drain = Effect.gen(function* () {
      closing = true
      yield* Deferred.succeed(initiated, undefined)
      // stops listening and closes the idle connections (Node ≥ 19); its callback would wait for
      // every connection: step 4 ends those
      node.close()
      for (const res of inFlight) if (!res.headersSent) res.shouldKeepAlive = false
      if (inFlight.size === 0) yield* Deferred.succeed(idle, undefined)
      // a finalizer runs uninterruptibly: the wait is made interruptible so the timeout can end it
      yield* Effect.ignore(Effect.timeout(Effect.interruptible(Deferred.await(idle)), shutdownTimeout))
      node.closeAllConnections()
    })
    return {
      signal: { initiated: Deferred.await(initiated), isInitiated: () => closing },
      drain
    }
  })
