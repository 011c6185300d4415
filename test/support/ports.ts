/** Free loopback ports for test servers: bind port 0, read the port back, release it. */
import * as net from "node:net"

export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = net.createServer()
    server.unref()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => (port > 0 ? resolve(port) : reject(new Error("no port assigned"))))
    })
  })

export const freePorts = async (n: number): Promise<Array<number>> => {
  // Hold every probe open until all are chosen, so the n ports are distinct.
  const servers: Array<net.Server> = []
  try {
    const ports: Array<number> = []
    for (let i = 0; i < n; i++) {
      const server = net.createServer()
      servers.push(server)
      ports.push(
        await new Promise<number>((resolve, reject) => {
          server.once("error", reject)
          server.listen(0, "127.0.0.1", () => {
            const address = server.address()
            resolve(typeof address === "object" && address !== null ? address.port : 0)
          })
        })
      )
    }
    return ports
  } finally {
    await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))))
  }
}
