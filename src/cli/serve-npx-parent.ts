/**
 * `npx etcd-effect serve &` then `kill $!`: npm 11's `npm exec` runs the bin through `sh -c`, and
 * passes SIGTERM / SIGINT on to that shell only, which dies without passing it to us: the server
 * would go on, an orphan. So under npm exec (`npm_command=exec`, what npx sets) the server takes
 * its parent's end — seen as being re-parented — as SIGTERM: it stops gracefully, as the kill meant.
 * Elsewhere (`node_modules/.bin/etcd-effect serve &`, nohup, a service manager) nothing changes:
 * a server outlives the shell that started it, as etcd does.
 */

/** how often the parent is looked at (a timer that keeps nothing alive) */
const POLL_MS = 250

/** Under npm exec, stops the process with SIGTERM once its parent is gone. */
export const stopWhenNpxGoes = (env: NodeJS.ProcessEnv = process.env): void => {
  if (env["npm_command"] !== "exec") return
  const parent = process.ppid
  const timer = setInterval(() => {
    if (process.ppid === parent) return
    clearInterval(timer)
    process.kill(process.pid, "SIGTERM")
  }, POLL_MS)
  timer.unref()
}
