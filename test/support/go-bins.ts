/**
 * The Go oracles benchmarks/go/build.sh has built already (ETCD_36_BIN, ETCDUTL_36_BIN,
 * ETCDCTL_36_BIN, BBOLT_BIN, …): tests build nothing and skip without them, unless REQUIRE_GO=1,
 * where they run and fail.
 */
import { execFileSync } from "node:child_process"

const found: Record<string, string> = {}
try {
  const out = execFileSync("bash", ["benchmarks/go/build.sh", "--cached"], { encoding: "utf8", timeout: 30_000 })
  for (const line of out.split("\n")) {
    const m = /^(\w+)=(.+)$/.exec(line)
    if (m !== null) found[m[1]!] = m[2]!
  }
} catch {
  // no Go, or nothing built
}

export const requireGo = process.env.REQUIRE_GO === "1"

/** A built binary's path; with REQUIRE_GO=1 a missing one is a path that fails when run. */
export const goBins: Readonly<Record<string, string | undefined>> = new Proxy(found, {
  get: (t, k: string) => t[k] ?? (requireGo ? `/nonexistent/${k}` : undefined)
})
