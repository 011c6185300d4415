/**
 * The server side of client TLS (etcd's transport.TLSInfo.ServerConfig): the options every
 * https listener (client URLs and metrics URLs) is made with, and the reload etcd does — its
 * GetCertificate reads the key pair at each handshake, so a renewed certificate is served to the
 * next connection without a restart. Here each new connection stats the files (cheap, no read)
 * and the options are rebuilt only when one changed; a file that fails to load then keeps the
 * last good certificate (and logs), rather than refusing every client.
 */
import * as fs from "node:fs"
import * as tls from "node:tls"
import { CIPHER_SUITES, type ClientTlsConfig, TLS13_SUITES, type TlsVersionName } from "./tls-config.js"

export interface TlsFiles {
  readonly certFile: string
  readonly keyFile: string
  readonly trustedCaFile: string | undefined
}

export interface TlsSource {
  /** The current server options; rebuilt when a file changed since the last call. */
  readonly options: () => tls.TlsOptions
  /** Bumped at each rebuild (listeners compare it to know when to swap their context). */
  readonly generation: () => number
}

const NODE_VERSION: Record<TlsVersionName, tls.SecureVersion> = { "TLS1.2": "TLSv1.2", "TLS1.3": "TLSv1.3" }

const stamp = (file: string | undefined): string => {
  if (file === undefined) return ""
  const s = fs.statSync(file, { throwIfNoEntry: false })
  return s === undefined ? "missing" : `${s.ino}:${s.size}:${s.mtimeMs}:${s.ctimeMs}`
}

/** Builds the options from the files; throws when a file is missing or not PEM of the right kind. */
const build = (config: ClientTlsConfig, files: TlsFiles): tls.TlsOptions => {
  const ciphers =
    config.cipherSuites.length === 0
      ? undefined
      : `${TLS13_SUITES}:${config.cipherSuites.map((n) => CIPHER_SUITES[n]!).join(":")}`
  return {
    cert: fs.readFileSync(files.certFile),
    key: fs.readFileSync(files.keyFile),
    ...(files.trustedCaFile === undefined ? {} : { ca: fs.readFileSync(files.trustedCaFile) }),
    requestCert: config.clientCertAuth,
    rejectUnauthorized: config.clientCertAuth,
    minVersion: NODE_VERSION[config.minVersion],
    maxVersion: NODE_VERSION[config.maxVersion ?? "TLS1.3"],
    ...(ciphers === undefined ? {} : { ciphers, honorCipherOrder: true }),
    // gRPC is negotiated as h2; HTTP/1.1 for the gateway and the HTTP endpoints (etcd's NextProtos)
    ALPNProtocols: ["h2", "http/1.1"]
  }
}

/**
 * A reloading source over the files. The first load must succeed (a start-up error line
 * otherwise); later failures keep the last good options and call `onReloadError`.
 */
export const makeTlsSource = (
  config: ClientTlsConfig,
  files: TlsFiles,
  onReloadError: (message: string) => void
): TlsSource | string => {
  const stamps = () => [files.certFile, files.keyFile, files.trustedCaFile].map(stamp).join("|")
  let seen = stamps()
  let current: tls.TlsOptions
  try {
    current = build(config, files)
    // createSecureContext checks that the key matches the certificate and the PEM parses
    tls.createSecureContext(current)
  } catch (e) {
    return `error loading TLS key pair (--cert-file ${files.certFile}, --key-file ${files.keyFile}): ${messageOf(e)}`
  }
  let generation = 0
  return {
    options: () => {
      let now: string
      try {
        now = stamps()
      } catch {
        return current
      }
      if (now === seen) return current
      seen = now
      try {
        const next = build(config, files)
        tls.createSecureContext(next)
        current = next
        generation++
      } catch (e) {
        onReloadError(`TLS certificate reload failed, serving the previous one: ${messageOf(e)}`)
      }
      return current
    },
    generation: () => generation
  }
}

const messageOf = (e: unknown): string =>
  typeof e === "object" && e !== null && "message" in e && typeof e.message === "string" ? e.message : String(e)
