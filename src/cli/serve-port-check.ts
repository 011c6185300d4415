/**
 * Nothing before the checks (issue 46): the client and metrics ports are tried before the member
 * starts, so a port in use fails the start with etcd's words before the data dir is created or
 * opened. Each listen URL with a fixed port is bound and released at once; port 0 is not tried.
 */
import * as net from "node:net"
import { Effect } from "effect"

const tryBind = (host: string, port: number): Promise<string | undefined> =>
  new Promise((resolve) => {
    const server = net.createServer()
    server.once("error", (e: NodeJS.ErrnoException) =>
      resolve(
        `listen tcp ${host.includes(":") ? `[${host}]` : host}:${port}: bind: ${
          e.code === "EADDRINUSE" ? "address already in use" : e.message
        }`
      )
    )
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(undefined)))
  })

/** The first listen URL whose port cannot be bound now, in etcd's words; undefined when all can. */
export const checkPortsFree = (urls: ReadonlyArray<string>): Effect.Effect<string | undefined> =>
  Effect.promise(async () => {
    for (const url of urls) {
      const m = /^[a-z]+:\/\/(\[[^\]]*\]|[^:/]*):(\d+)/.exec(url)
      if (m === null || m[2] === "0") continue
      const host = m[1]!.replace(/^\[|\]$/g, "")
      const err = await tryBind(host === "" ? "0.0.0.0" : host, Number(m[2]))
      if (err !== undefined) return err
    }
    return undefined
  })
