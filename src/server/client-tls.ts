/**
 * The client TLS of a member, set up at start-up as etcd's embed does: the flags are checked
 * against the URLs (https needs a certificate), --auto-tls makes or reuses a self-signed pair in
 * <data-dir>/fixtures/client when no files are given, and the files are loaded once (a bad file
 * is a start-up error) into a reloading TlsSource shared by the client and metrics listeners.
 */
import { Effect, Runtime } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { ListenAddress } from "./config.js"
import { ServeError } from "./serve-error.js"
import { selfCert } from "./self-signed-cert.js"
import { checkClientTls, type ClientTlsConfig } from "./tls-config.js"
import { makeTlsSource, type TlsSource } from "./tls-context.js"

const badConfig = (message: string) => new ServeError({ reason: "BadConfig", message })

/** The TLS source for the https listeners among `addrs`, or undefined when none is https. */
export const setupClientTls = (
  tls: ClientTlsConfig,
  clientAddrs: ReadonlyArray<ListenAddress>,
  metricsAddrs: ReadonlyArray<ListenAddress>,
  dataDir: string | undefined
): Effect.Effect<TlsSource | undefined, ServeError> =>
  Effect.gen(function* () {
    const https = [...clientAddrs, ...metricsAddrs].filter((a) => a.https)
    const problem = checkClientTls(tls, [
      ...clientAddrs.filter((a) => a.https).map((a) => ({ url: a.url, kind: "client" as const })),
      ...metricsAddrs.filter((a) => a.https).map((a) => ({ url: a.url, kind: "metrics" as const }))
    ])
    if (problem !== undefined) return yield* badConfig(problem)
    if (https.length === 0) {
      if (tls.certFile !== undefined) {
        yield* Effect.logWarning("scheme is HTTP while key and cert files are present; ignoring key and cert files")
      }
      return undefined
    }
    let files =
      tls.certFile !== undefined && tls.keyFile !== undefined
        ? { certFile: tls.certFile, keyFile: tls.keyFile }
        : undefined
    if (files === undefined) {
      // --auto-tls (checkClientTls made sure one of the two is there)
      const dir =
        dataDir === undefined
          ? fs.mkdtempSync(path.join(os.tmpdir(), "etcd-effect-auto-tls-"))
          : path.join(dataDir, "fixtures", "client")
      files = yield* Effect.try({
        try: () => selfCert(dir, [...new Set(https.map((a) => a.host))]),
        catch: (e) => badConfig(`cannot generate a self-signed certificate (--auto-tls): ${String(e)}`)
      })
      yield* Effect.logWarning("automatically generated client TLS certificate (--auto-tls)").pipe(
        Effect.annotateLogs({ certFile: files.certFile })
      )
    }
    // a reload's warning is logged on the server's runtime: its logger (logfmt, --log-level), not the default
    // eslint-disable-next-line no-restricted-properties -- a reload callback logs synchronously on the runtime of the scope that serves
    const logWarning = Runtime.runSync(yield* Effect.runtime<never>())
    const source = makeTlsSource(tls, { ...files, trustedCaFile: tls.trustedCaFile }, (message) =>
      logWarning(Effect.logWarning(message))
    )
    if (typeof source === "string") return yield* badConfig(source)
    return source
  })
