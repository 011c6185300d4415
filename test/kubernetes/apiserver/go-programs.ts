/**
 * The Go test programs of test/go/<module>/cmd: in test/go/kubernetes, client-go itself (leader
 * election, the event recorders) and Kubernetes' server-side apply as an oracle
 * (test/support/ssa-oracle.ts); in test/go/controller-runtime, a controller-runtime manager
 * (controller-runtime.test.ts). Each module has its own go.mod, so one module's dependencies never
 * change another's (test/go/kubernetes/go.mod also keys the cached kube-apiserver build). Built with
 * Go and cached under ~/.cache/etcd-effect/go-programs by the hash of their module and sources
 * (every .go file of the program's directory). Without go the tests using them are skipped, unless
 * REQUIRE_GO=1 (.ci/run), when that is a failure. The build runs as a child process the test
 * worker awaits: a synchronous build of client-go (minutes on a loaded machine) would stall the
 * worker's event loop past vitest's RPC timeout ("Timeout calling onTaskUpdate", an error that
 * fails the run although every test passed).
 */
import { execFile, execFileSync } from "node:child_process"
import { createHash } from "node:crypto"
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync } from "node:fs"
import { homedir } from "node:os"
import * as path from "node:path"
import { promisify } from "node:util"

/** the Go modules under test/go */
export type GoModule = "kubernetes" | "controller-runtime"

export const hasGo = (() => {
  try {
    execFileSync("go", ["version"], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
})()
if (!hasGo && process.env["REQUIRE_GO"] === "1") throw new Error("go is not installed (REQUIRE_GO=1)")

/** go build of test/go/<module>/cmd/<name> (cached); the binary's path */
export const goProgram = async (name: string, module: GoModule = "kubernetes"): Promise<string> => {
  const moduleDir = path.resolve(__dirname, "../../go", module)
  const hash = createHash("sha256")
  const sources = readdirSync(path.join(moduleDir, "cmd", name))
    .filter((f) => f.endsWith(".go"))
    .sort()
    .map((f) => `cmd/${name}/${f}`)
  for (const f of ["go.mod", "go.sum", ...sources]) hash.update(readFileSync(path.join(moduleDir, f)))
  const dir = path.join(process.env["XDG_CACHE_HOME"] ?? path.join(homedir(), ".cache"), "etcd-effect", "go-programs")
  const bin = path.join(dir, `${name}-${hash.digest("hex").slice(0, 16)}`)
  if (existsSync(bin)) return bin
  mkdirSync(dir, { recursive: true })
  const tmp = `${bin}.${process.pid}.tmp`
  await promisify(execFile)("go", ["build", "-o", tmp, `./cmd/${name}`], { cwd: moduleDir })
  renameSync(tmp, bin)
  return bin
}
