/**
 * Our server as a `ServerTarget` for the client suites (test/support/servers.ts): `etcd-effect
 * serve` as a child process from dist/ on a free loopback port with a temporary LMDB data dir, so
 * `stop` (SIGKILL), `start` and `restart` keep data and port exactly as the etcd target does.
 * To run the client suites against it too, add `etcdEffectTarget` to `serverTargets`.
 */
import { restartableServer, type ServerOptions, type ServerTarget, type TestServer } from "../../support/servers.js"
import { freePort } from "../../support/ports.js"
import { ensureBuilt, ServeProcess, tempDir } from "./process.js"

export const etcdEffectTarget: ServerTarget = {
  name: "etcd-effect",
  enabled: true,
  start: async (options: ServerOptions = {}): Promise<TestServer> => {
    await ensureBuilt()
    const dataDir = tempDir()
    const port = await freePort()
    const args =
      options.progressNotifyInterval === undefined
        ? []
        : ["--experimental-watch-progress-notify-interval", options.progressNotifyInterval]
    let proc: ServeProcess | undefined = await ServeProcess.start({ dataDir, port, args })
    const stop = async () => {
      await proc?.kill("SIGKILL")
      proc = undefined
    }
    const start = async () => {
      if (proc === undefined) proc = await ServeProcess.start({ dataDir, port, args })
    }
    return restartableServer({ endpoint: `127.0.0.1:${port}`, dataDir, start, stop })
  }
}
