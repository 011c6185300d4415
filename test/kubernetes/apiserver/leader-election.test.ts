/**
 * client-go's leader election (tools/leaderelection, resourcelock.LeaseLock) against our
 * apiserver: two processes of test/go/kubernetes/cmd/leaderelect race for one Lease; the first
 * leads, the second follows; the leader is killed (SIGKILL: no release), and the other takes over
 * once the Lease's leaseDurationSeconds has passed since its last renewTime — the Lease then names
 * it, with leaseTransitions 1. The program is built with Go (go-programs.ts).
 */
import { type ChildProcess, spawn } from "node:child_process"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { goProgram, hasGo } from "./go-programs.js"
import { newNamespace, onApiServer, request } from "./support.js"

interface Candidate {
  readonly id: string
  readonly proc: ChildProcess
  readonly lines: Array<string>
  /** resolves when a line equal to `line` has been printed (rejects after ms, or if the process exits first) */
  waitFor(line: string, ms: number): Promise<void>
}

const server = onApiServer()
let program = ""
const running: Array<ChildProcess> = []

beforeAll(async () => {
  if (hasGo) program = await goProgram("leaderelect")
}, 600_000)

afterAll(() => {
  for (const p of running) if (p.exitCode === null && p.signalCode === null) p.kill("SIGKILL")
})

const candidate = (id: string, ns: string): Candidate => {
  const proc = spawn(program, ["-server", server().url, "-id", id, "-namespace", ns, "-name", "lock"], {
    stdio: ["ignore", "pipe", "pipe"]
  })
  running.push(proc)
  const lines: Array<string> = []
  const waiters: Array<() => void> = []
  let stderr = ""
  let buf = ""
  proc.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
    buf += chunk
    let i: number
    while ((i = buf.indexOf("\n")) >= 0) {
      lines.push(buf.slice(0, i))
      buf = buf.slice(i + 1)
    }
    for (const w of waiters.splice(0)) w()
  })
  proc.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
  return {
    id,
    proc,
    lines,
    waitFor: (line, ms) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(
          () =>
            reject(
              new Error(
                `${id}: no "${line}" within ${ms} ms; printed ${JSON.stringify(lines)}; stderr ${stderr.slice(-2000)}`
              )
            ),
          ms
        )
        proc.on("exit", (code, signal) => {
          if (!lines.includes(line)) {
            clearTimeout(timer)
            reject(new Error(`${id} exited (${code ?? signal}) before "${line}": ${stderr.slice(-2000)}`))
          }
        })
        const check = () => {
          if (lines.includes(line)) {
            clearTimeout(timer)
            resolve()
          } else waiters.push(check)
        }
        check()
      })
  }
}

describe.skipIf(!hasGo)("client-go leader election (LeaseLock)", () => {
  it("two candidates: one leads, it is killed, the other takes the Lease over", async () => {
    const ns = await newNamespace(server().url, "le")
    const a = candidate("a", ns)
    // the deadlines are the program's own timing (lease 2 s, retry 250 ms) plus process start-up
    await a.waitFor("leading a", 30_000)
    const b = candidate("b", ns)
    await b.waitFor("leader a", 30_000)
    expect(b.lines).not.toContain("leading b")
    const lease = `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/lock`
    const held = await request(server().url, "GET", lease)
    expect(held.body.spec).toMatchObject({ holderIdentity: "a", leaseDurationSeconds: 2, leaseTransitions: 0 })
    expect(held.body.spec.renewTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/)

    a.proc.kill("SIGKILL")
    await b.waitFor("leading b", 30_000)
    expect(b.lines).toContain("leader b")
    const taken = await request(server().url, "GET", lease)
    expect(taken.body.spec).toMatchObject({ holderIdentity: "b", leaseTransitions: 1 })
    expect(Date.parse(taken.body.spec.acquireTime)).toBeGreaterThanOrEqual(Date.parse(held.body.spec.renewTime))

    // SIGTERM: b releases the Lease (ReleaseOnCancel) and says it stopped
    b.proc.kill("SIGTERM")
    await b.waitFor("stopped b", 30_000)
    await new Promise<void>((resolve) => (b.proc.exitCode !== null ? resolve() : b.proc.on("exit", () => resolve())))
    const released = await request(server().url, "GET", lease)
    expect(released.body.spec.holderIdentity ?? "").toBe("")
  })
})
