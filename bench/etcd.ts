/**
 * A real etcd 3.4 (Debian's /usr/bin/etcd, or $ETCD_BIN) for the benchmarks to measure beside ours:
 * one member on free loopback ports, its data dir removed on stop.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"
import { Etcd3 } from "etcd3"

export const ETCD_BIN = process.env.ETCD_BIN ?? "/usr/bin/etcd"

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const s = net.createServer()
    s.once("error", reject)
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as net.AddressInfo).port
      s.close(() => resolve(port))
    })
  })

export interface EtcdProcess {
  /** host:port of the client URL */
  readonly endpoint: string
  readonly stop: () => Promise<void>
}

/** Starts etcd with its data dir under `dataRoot` and waits until it answers a Range. */
export const startEtcd = async (dataRoot: string, prefix: string): Promise<EtcdProcess> => {
  const dataDir = fs.mkdtempSync(path.join(dataRoot, prefix))
  const [client, peer] = [await freePort(), await freePort()]
  const proc = spawn(
    ETCD_BIN,
    [
      "--name", "bench",
      "--data-dir", dataDir,
      "--listen-client-urls", `http://127.0.0.1:${client}`,
      "--advertise-client-urls", `http://127.0.0.1:${client}`,
      "--listen-peer-urls", `http://127.0.0.1:${peer}`,
      "--initial-advertise-peer-urls", `http://127.0.0.1:${peer}`,
      "--initial-cluster", `bench=http://127.0.0.1:${peer}`,
      "--log-level", "error"
    ],
    { stdio: "ignore" }
  )
  const stop = async () => {
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill("SIGKILL")
      await new Promise((r) => proc.once("exit", r))
    }
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
  const endpoint = `127.0.0.1:${client}`
  const probe = new Etcd3({ hosts: `http://${endpoint}` })
  try {
    const ready = Date.now() + 15_000
    for (;;) {
      try {
        await probe.kv.range({ key: Buffer.from("health") })
        break
      } catch (e) {
        if (Date.now() > ready) throw e
        await sleep(100)
      }
    }
  } catch (e) {
    await stop()
    throw e
  } finally {
    probe.close()
  }
  return { endpoint, stop }
}
