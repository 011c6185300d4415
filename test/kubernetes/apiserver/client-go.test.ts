/**
 * The real clients: client-go v0.37.2's typed clientset (test/go/kubernetes/cmd/typed-client),
 * which sends and asks for protobuf for the built-in kinds, and its dynamic client
 * (cmd/dynamic-client), unstructured JSON for ConfigMaps and a CRD's custom resources. Each runs its
 * create/get/list/update/patch/apply/delete (with a finalizer) and watch checks and a shared
 * informer against the apiserver, once with client-go's WatchListClient feature on (the informer
 * syncs from one WatchList stream: sendInitialEvents and its bookmark) and once off (a LIST, then a
 * watch); the program fails when the informer took the other way, or fell back to a LIST. The
 * typed program also reports the Content-Type of every answer. Built with Go once per source
 * version and cached (go-programs.ts); without Go the tests are skipped, unless REQUIRE_GO=1.
 */
import { execFile } from "node:child_process"
import { beforeAll, describe, expect, it } from "vitest"
import { goProgram, hasGo } from "./go-programs.js"
import { onApiServer } from "./support.js"

const run = (bin: string, url: string, watchList: boolean) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      bin,
      ["-server", url],
      { timeout: 120_000, env: { ...process.env, KUBE_FEATURE_WatchListClient: String(watchList) } },
      (err, stdout, stderr) =>
        resolve({ code: err === null ? 0 : typeof err.code === "number" ? err.code : 1, stdout, stderr })
    )
  })

describe.skipIf(!hasGo)("apiserver: client-go's typed clientset (protobuf) and dynamic client", () => {
  let typed = ""
  let dynamic = ""
  // a Go build on a fresh machine compiles client-go: the hook's own budget
  beforeAll(async () => {
    typed = await goProgram("typed-client")
    dynamic = await goProgram("dynamic-client")
  }, 600_000)
  const server = onApiServer()

  for (const watchList of [true, false])
    it(`typed clientset: ConfigMaps, Secrets, Namespaces, Leases, Events and an informer, all in protobuf (WatchListClient ${watchList ? "on" : "off"})`, async () => {
      const r = await run(typed, server().url, watchList)
      expect(r.stderr).toBe("")
      expect(r.code).toBe(0)
      expect(r.stdout).toContain(`typed-client: WatchListClient=${watchList}\n`)
      expect(r.stdout).toContain(
        `typed-client: informer lists ${watchList ? 0 : 1}, watch-lists ${watchList ? 1 : 0}\n`
      )
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

  for (const watchList of [true, false])
    it(`dynamic client: ConfigMaps and a CRD's custom resources, finalizers, apply and an informer (WatchListClient ${watchList ? "on" : "off"})`, async () => {
      const r = await run(dynamic, server().url, watchList)
      expect(r.stderr).toBe("")
      expect(r.code).toBe(0)
      expect(r.stdout).toContain(`dynamic-client: WatchListClient=${watchList}\n`)
      const requests = JSON.parse(/informer requests (.*)\n/.exec(r.stdout)![1]!) as {
        lists: Array<string> | null
        watchLists: Array<string> | null
      }
      if (watchList) {
        expect(requests.lists).toBeNull()
        expect(requests.watchLists).toHaveLength(1)
        expect(requests.watchLists![0]).toMatch(/resourceVersionMatch=NotOlderThan&sendInitialEvents=true/)
      } else {
        expect(requests.watchLists).toBeNull()
        expect(requests.lists).toHaveLength(1)
        expect(requests.lists![0]).toMatch(/limit=500&resourceVersion=0/)
      }
      expect(r.stdout).toContain("dynamic-client: all checks passed")
    })
})
