/**
 * `etcd-effect apiserver --event-ttl` (the built program): an Event's etcd key is put on a lease
 * granted --event-ttl plus the reuse window (90s → 94 s: 5% of 90, truncated); a bad value is one
 * line on stderr and exit 1, as pflag words it.
 */
import { spawn } from "node:child_process"
import { Duration, Effect } from "effect"
import { describe, expect, it } from "vitest"
import { make as makeClient } from "../../src/client/client.js"
import { ensureBuilt, mainJs } from "../server/support/process.js"

const exitOf = (args: ReadonlyArray<string>) =>
  new Promise<{ code: number | null; stderr: string }>((resolve) => {
    const p = spawn(process.execPath, [mainJs, "apiserver", ...args], { stdio: ["ignore", "ignore", "pipe"] })
    let stderr = ""
    p.stderr!.on("data", (d) => (stderr += String(d)))
    p.on("exit", (code) => resolve({ code, stderr }))
  })

describe("apiserver --event-ttl", () => {
  it("a bad value is one line and exit 1", async () => {
    await ensureBuilt()
    const bad = await exitOf(["--port", "0", "--event-ttl", "1d"])
    expect(bad.code).toBe(1)
    expect(bad.stderr).toBe(
      'Error: invalid argument "1d" for "--event-ttl" flag: time: unknown unit "d" in duration "1d"\n'
    )
  })

  it("90s: an Event's key is on a lease granted 94 s", async () => {
    await ensureBuilt()
    const proc = spawn(process.execPath, [mainJs, "apiserver", "--port", "0", "--event-ttl", "90s"], {
      stdio: ["ignore", "pipe", "pipe"]
    })
    try {
      const { url, etcd } = await new Promise<{ url: string; etcd: string }>((resolve, reject) => {
        let out = ""
        proc.stdout!.on("data", (d) => {
          out += String(d)
          const u = /serving on (http:\/\/\S+)/.exec(out)
          const e = /etcdctl --endpoints=(\S+)\)/.exec(out)
          if (u !== null && e !== null) resolve({ url: u[1]!, etcd: e[1]! })
        })
        proc.on("exit", (code) => reject(new Error(`apiserver exited ${code}`)))
      })
      const r = await fetch(`${url}/api/v1/namespaces/default/events`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ metadata: { name: "e" }, involvedObject: { kind: "Pod", name: "p" }, reason: "R" })
      })
      expect(r.status).toBe(201)
      const granted = await Effect.runPromise(
        Effect.scoped(
          Effect.gen(function* () {
            const client = yield* makeClient({ endpoints: [etcd], dialTimeout: Duration.seconds(5) })
            const kv = yield* client.kv.get("/registry/events/default/e")
            return (yield* client.lease.timeToLive(kv.kvs[0]!.lease)).grantedTtl
          })
        )
      )
      expect(granted).toBe(94n)
    } finally {
      const exited = new Promise((resolve) => proc.once("exit", resolve))
      proc.kill("SIGTERM")
      await exited
    }
  })
})
