/**
 * The CallRunner's own CPU per unary call (src/server/grpc-bridge.ts), without a transport: calls
 * are EventEmitters, handlers are shaped like Range (an Effect that ends synchronously), Put (an
 * Effect that waits, as for its WAL group), Range as it answers now (a plain Exit) and Put as it
 * answers now (a PendingWrite completed by the durability callback: mvcc/pending-write.ts). To
 * compare two builds, run each build's copy of this file.
 *
 *   npm run build && node dist/benchmarks/call-runner.js
 */
import { Effect, Exit, Scope } from "effect"
import { EventEmitter } from "node:events"
import { PendingWrite } from "../src/mvcc/pending-write.js"
import { makeCallRunner } from "../src/server/grpc-bridge.js"

class FakeCall extends EventEmitter {
  cancelled = false
  readonly request = { key: "k" }
  getDeadline(): number {
    return Infinity
  }
}

type Handler = (call: never, callback: never) => void

const main = async () => {
  const scope = Effect.runSync(Scope.make())
  const runner = await Effect.runPromise(Scope.extend(makeCallRunner(), scope))
  let waiters: Array<() => void> = []
  const wait = Effect.async<void>((resume) => {
    waiters.push(() => resume(Effect.void))
  })
  const handlers: Record<string, [Handler, boolean]> = {
    "Range-shaped (Effect, synchronous)": [
      runner.unary("Range", (req) =>
        Effect.map(
          Effect.suspend(() => Effect.succeed(req)),
          (r) => ({ r })
        )
      ) as Handler,
      false
    ],
    "Put-shaped (Effect that waits)": [
      runner.unary("Put", (req) =>
        Effect.map(
          Effect.suspend(() => Effect.as(wait, req)),
          (r) => ({ r })
        )
      ) as Handler,
      true
    ],
    "plain Exit (Range now)": [runner.unary("Range", (req) => Exit.succeed({ r: req })) as Handler, false],
    "PendingWrite (Put now)": [
      runner.unary("Put", (req) => {
        const w = new PendingWrite<unknown, never>()
        waiters.push(() => w.complete(Exit.succeed(req)))
        return w.map((r) => ({ r }))
      }) as Handler,
      true
    ]
  }
  const run = async ([h, waits]: [Handler, boolean], n: number): Promise<number> => {
    let done = 0
    const callback = (() => done++) as never
    const t0 = process.cpuUsage()
    for (let i = 0; i < n; i += 100) {
      for (let j = 0; j < 100; j++) h(new FakeCall() as never, callback)
      if (waits) {
        const ws = waiters
        waiters = []
        for (const w of ws) w()
        while (done < i + 100) await new Promise((r) => setImmediate(r))
      }
    }
    while (done < n) await new Promise((r) => setImmediate(r))
    const u = process.cpuUsage(t0)
    return (u.user + u.system) / n
  }
  for (const [name, h] of Object.entries(handlers)) {
    await run(h, 20_000)
    const us = await run(h, h[1] ? 100_000 : 200_000)
    process.stdout.write(`${name}: ${us.toFixed(2)} µs CPU per call\n`)
  }
  await Effect.runPromise(Scope.close(scope, Exit.void))
}

void main()
