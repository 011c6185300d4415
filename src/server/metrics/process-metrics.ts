/**
 * The process_* families as Prometheus' Node client (prom-client) names them, read at scrape
 * time: CPU from process.cpuUsage(), memory and file descriptors from Linux's /proc (small
 * in-memory files). Where /proc is absent only what Node itself knows is reported.
 */
import * as fs from "node:fs"
import { performance } from "node:perf_hooks"
import { Effect } from "effect"
import { type Collector, counter, gauge, type MetricFamily } from "./prometheus.js"

/** Fields of /proc/self/status in bytes (VmRSS, VmSize, VmData are in kB there). */
const readStatus = (): Map<string, number> | undefined => {
  let text: string
  try {
    text = fs.readFileSync("/proc/self/status", "latin1")
  } catch {
    return undefined
  }
  const out = new Map<string, number>()
  for (const line of text.split("\n")) {
    const m = /^(Vm\w+):\s+(\d+)\s+kB/.exec(line)
    if (m !== null) out.set(m[1]!, Number(m[2]) * 1024)
  }
  return out
}

const openFds = (): number | undefined => {
  try {
    return fs.readdirSync("/proc/self/fd").length
  } catch {
    return undefined
  }
}

/** The soft limit on open files ("Max open files" in /proc/self/limits); "unlimited" is +Inf. */
const maxFds = (): number | undefined => {
  try {
    const line = fs
      .readFileSync("/proc/self/limits", "latin1")
      .split("\n")
      .find((l) => l.startsWith("Max open files"))
    const soft = line?.slice("Max open files".length).trim().split(/\s+/)[0]
    if (soft === undefined) return undefined
    return soft === "unlimited" ? Infinity : Number(soft)
  } catch {
    return undefined
  }
}

export const processCollector: Collector = Effect.sync(() => {
  const cpu = process.cpuUsage()
  const user = cpu.user / 1e6
  const system = cpu.system / 1e6
  const status = readStatus()
  const rss = status?.get("VmRSS") ?? process.memoryUsage.rss()
  const out: Array<MetricFamily> = [
    counter("process_cpu_user_seconds_total", "Total user CPU time spent in seconds.", user),
    counter("process_cpu_system_seconds_total", "Total system CPU time spent in seconds.", system),
    counter("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.", user + system),
    gauge(
      "process_start_time_seconds",
      "Start time of the process since unix epoch in seconds.",
      Math.round(performance.timeOrigin) / 1000
    ),
    gauge("process_resident_memory_bytes", "Resident memory size in bytes.", rss)
  ]
  const virtual = status?.get("VmSize")
  if (virtual !== undefined) out.push(gauge("process_virtual_memory_bytes", "Virtual memory size in bytes.", virtual))
  const heap = status?.get("VmData")
  if (heap !== undefined) out.push(gauge("process_heap_bytes", "Process heap size in bytes.", heap))
  const open = openFds()
  if (open !== undefined) out.push(gauge("process_open_fds", "Number of open file descriptors.", open))
  const max = maxFds()
  if (max !== undefined) out.push(gauge("process_max_fds", "Maximum number of open file descriptors.", max))
  return out
})
