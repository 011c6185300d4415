/**
 * The real client: client-go v0.37.2's typed clientset (test/go/kubernetes/cmd/typed-client), which
 * sends and asks for protobuf for the built-in kinds, runs its create/get/list/update/patch/delete
 * and watch checks of ConfigMaps, Secrets and Namespaces (Leases and Events when served) and a
 * shared informer's sync (a WatchList stream with its bookmarks) against
 * the apiserver and reports the Content-Type of every answer. The program is built with Go once
 * per source version and cached outside the repository (a fresh machine: about a minute; after
 * that it is reused). Without Go the test is skipped, unless REQUIRE_GO=1.
 */
import { execFile } from "node:child_process"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { promisify } from "node:util"
import { beforeAll, describe, expect, it } from "vitest"
import { onApiServer } from "./support.js"

const run = promisify(execFile)
const moduleDir = path.resolve(import.meta.dirname, "../../go/kubernetes")
const hasGo = (process.env["PATH"] ?? "")
  .split(path.delimiter)
  .some((d) => d !== "" && fs.existsSync(path.join(d, "go")))

/** The program's binary, built unless a build of the same sources exists. */
const typedClient = async (): Promise<string> => {
  const { stdout: goVersion } = await run("go", ["env", "GOVERSION"], { cwd: moduleDir })
  const hash = createHash("sha256")
  for (const f of ["go.mod", "go.sum", "cmd/typed-client/main.go"])
    hash.update(fs.readFileSync(path.join(moduleDir, f)))
  hash.update(goVersion)
  const cache = process.env["XDG_CACHE_HOME"] ?? path.join(os.homedir(), ".cache")
  const dir = path.join(cache, "etcd-effect", `typed-client-${hash.digest("hex").slice(0, 16)}`)
  const bin = path.join(dir, "typed-client")
  if (fs.existsSync(bin)) return bin
  const tmp = `${dir}.${process.pid}.tmp`
  fs.mkdirSync(tmp, { recursive: true })
  await run("go", ["build", "-o", path.join(tmp, "typed-client"), "./cmd/typed-client"], { cwd: moduleDir })
  fs.rmSync(dir, { recursive: true, force: true })
  fs.renameSync(tmp, dir)
  return bin
}

describe.skipIf(!hasGo && process.env["REQUIRE_GO"] !== "1")(
  "apiserver: client-go's typed clientset (protobuf)",
  () => {
    let bin = ""
    // a Go build on a fresh machine compiles client-go: the hook's own budget
    beforeAll(async () => {
      bin = await typedClient()
    }, 600_000)
    const server = onApiServer()

    it("create, get, list, update, patch, apply, delete and watch ConfigMaps, Secrets and Namespaces, and an informer, all in protobuf", async () => {
      const r = await run(bin, ["-server", server().url]).catch((e: { stdout: string; stderr: string }) => e)
      expect(r.stderr).toBe("")
      expect(r.stdout).toContain("typed-client: all checks passed")
      // the typed requests went out in protobuf and came back in protobuf (the program fails otherwise)
      for (const verb of ["POST", "PUT", "PATCH", "DELETE"])
        for (const kind of ["configmaps", "secrets", "namespaces"])
          expect(r.stdout).toMatch(
            new RegExp(
              `× ${verb} ${kind} accept="application/vnd\\.kubernetes\\.protobuf,application/json" -> application/vnd\\.kubernetes\\.protobuf\\n`
            )
          )
      expect(r.stdout).toMatch(/× GET configmaps accept="[^"]*" -> application\/vnd\.kubernetes\.protobuf;stream=watch/)
    })
  }
)
