/**
 * What the client and metrics listeners share about their address: the URL a listener serves on
 * once bound (port 0 resolved), and the one-line start-up error of a listen that failed.
 */
import { errorText } from "../errors.js"
import type { ListenAddress } from "./config.js"
import { ServeError } from "./serve-error.js"

/** The listen URL with the port the listener was given (etcd reports the bound one). */
export const boundUrl = (addr: ListenAddress, port: number): string => {
  const u = new URL(addr.url)
  u.port = String(port)
  return u.toString().replace(/\/$/, "")
}

/** The one-line start-up error of a failed listen, as etcd words it. */
export const listenError = (addr: ListenAddress, cause: unknown): ServeError => {
  const code = typeof cause === "object" && cause !== null && "code" in cause ? cause.code : undefined
  return new ServeError({
    reason: "Listen",
    message:
      code === "EADDRINUSE"
        ? `listen tcp ${addr.host}:${addr.port}: bind: address already in use`
        : `listen tcp ${addr.host}:${addr.port}: ${errorText(cause).split("\n")[0]}`
  })
}
