/**
 * Nothing before the checks (issue 46, item 5): a `serve` that cannot start — a bad
 * --listen-client-urls, a port in use, a host that does not resolve — says so in one line, exits
 * 1 and leaves no data dir behind (etcd checks its URLs and binds its listeners before it creates
 * the data dir, too).
 */
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freePort } from "../support/ports.js"
import { ensureBuilt, ServeProcess, tempDir } from "../server/support/process.js"

describe("serve refuses to start before it creates its data dir", () => {
  let dir: string
  let blocker: net.Server
  let busy: number
  beforeAll(async () => {
    await ensureBuilt()
    dir = tempDir()
    blocker = net.createServer()
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve))
    busy = (blocker.address() as net.AddressInfo).port
  }, 300_000)
  afterAll(() => {
    blocker?.close()
    fs.rmSync(dir, { recursive: true, force: true })
  })

  const failing = async (name: string, urls: string) => {
    const dataDir = path.join(dir, name)
    const p = ServeProcess.spawn({ dataDir, args: ["--listen-client-urls", urls] }, await freePort())
    const code = await p.exited
    return { code, stderr: p.stderr, created: fs.existsSync(dataDir) }
  }

  it("a port in use, a bad URL, an unknown host: one line, exit 1, no data dir", async () => {
    const [inUse, badScheme, badPort, unknownHost] = await Promise.all([
      failing("in-use", `http://127.0.0.1:${busy}`),
      failing("bad-scheme", "htp://127.0.0.1:2379"),
      failing("bad-port", "http://127.0.0.1:notaport"),
      failing("unknown-host", "http://no-such-host.invalid:2379")
    ])
    expect(inUse).toEqual({
      code: 1,
      stderr: `etcd-effect: listen tcp 127.0.0.1:${busy}: bind: address already in use\n`,
      created: false
    })
    expect(badScheme).toEqual({
      code: 1,
      stderr:
        'Error: invalid value "htp://127.0.0.1:2379" for flag --listen-client-urls: URL scheme must be http, https, unix, or unixs: htp://127.0.0.1:2379\n',
      created: false
    })
    expect(badPort).toMatchObject({ code: 1, created: false })
    expect(badPort.stderr.trimEnd().split("\n")).toHaveLength(1)
    expect(unknownHost).toMatchObject({ code: 1, created: false })
    expect(unknownHost.stderr).toMatch(/^etcd-effect: listen tcp no-such-host\.invalid:2379: .*\n$/)
  }, 120_000)
})
