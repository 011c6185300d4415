/**
 * Waits that fail on a stall, not on a wall-clock budget. A test that does a fixed amount of work
 * (a thousand writes, a few dozen processes, fifteen hundred property runs) takes several times
 * longer on a loaded machine than on a quiet one, so a budget for the whole of it fails for no
 * fault of the product (issue 24). These bound each step instead: a step that makes no progress for
 * STALL_MS is a hang, which is what a lost event, a hung watch or a dead server looks like. A test
 * built only of bounded steps takes no vitest timeout of its own (`it(…, 0)`).
 */

/** how long a step may go without progress: a hang, at any load this machine sees */
export const STALL_MS = 60_000

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** waits until done(); fails when progress() has not changed for `stallMs` */
export const untilDone = async (
  what: string,
  done: () => boolean | Promise<boolean>,
  progress: () => unknown,
  stallMs = STALL_MS
): Promise<void> => {
  let last = progress()
  let since = Date.now()
  while (!(await done())) {
    await sleep(50)
    const now = progress()
    if (now !== last) {
      last = now
      since = Date.now()
    } else if (Date.now() - since > stallMs)
      throw new Error(`${what}: no progress in ${stallMs} ms (at ${String(now)})`)
  }
}

/** p, or a failure naming `what` when it has not settled in `stallMs` */
export const unstalled = <A>(what: string, p: Promise<A>, stallMs = STALL_MS): Promise<A> => {
  let timer: NodeJS.Timeout | undefined
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: no answer in ${stallMs} ms`)), stallMs)
    })
  ]).finally(() => clearTimeout(timer))
}

/**
 * body(), or a failure when progress() has not changed for `stallMs` while it runs: for a test of
 * many steps that each move a counter (a request answered, an event seen, a phase begun).
 */
export const watchdog = async <A>(
  what: string,
  progress: () => unknown,
  body: () => Promise<A>,
  stallMs = STALL_MS
): Promise<A> => {
  let stop = false
  const guard = (async (): Promise<never> => {
    let last = progress()
    let since = Date.now()
    for (;;) {
      await sleep(200)
      if (stop) return new Promise<never>(() => {})
      const now = progress()
      if (now !== last) {
        last = now
        since = Date.now()
      } else if (Date.now() - since > stallMs) {
        throw new Error(`${what}: no progress in ${stallMs} ms (at ${String(now)})`)
      }
    }
  })()
  try {
    return await Promise.race([body(), guard])
  } finally {
    stop = true
  }
}
