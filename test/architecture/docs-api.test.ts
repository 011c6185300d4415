/**
 * docs/api/ is the API reference that TypeDoc (typedoc.json, with typedoc-plugin-markdown) makes
 * from the TSDoc of the package's three entry points, and it cannot go stale: this test generates
 * it again, into a scratch directory, and fails when any page differs from the checked-in one.
 * The same run is the check that every exported name has a doc comment: typedoc.json's
 * `notDocumented` validation is an error, so an undocumented export fails `npm run docs:api` and
 * this test with the name TypeDoc reports (`requiredToBeDocumented`: namespaces, classes,
 * interfaces, type aliases, functions, variables and enums, and the function-valued members of
 * exported object types, such as `Client.KV.get`).
 *
 * One TypeDoc run is a TypeScript program of src/ and the render: ~12 s of CPU on a quiet machine.
 */
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { afterAll, describe, expect, it } from "vitest"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")
const checkedIn = path.join(root, "docs/api")
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "docs-api-"))
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }))

/** every file under `dir`, relative to it, sorted */
const filesUnder = (dir: string, prefix = ""): Array<string> =>
  fs.existsSync(dir)
    ? fs
        .readdirSync(dir, { withFileTypes: true })
        .flatMap((e) =>
          e.isDirectory() ? filesUnder(path.join(dir, e.name), `${prefix}${e.name}/`) : [`${prefix}${e.name}`]
        )
        .sort()
    : []

/** TypeDoc's run as `npm run docs:api` makes it, into `out`: its exit code and what it printed */
const typedoc = async (out: string) => {
  const bin = path.join(root, "node_modules/typedoc/bin/typedoc")
  const run = await promisify(execFile)(process.execPath, [bin, "--out", out], {
    cwd: root,
    env: { ...process.env, NO_COLOR: "1", FORCE_COLOR: "0" },
    maxBuffer: 64 * 1024 * 1024
  }).then(
    ({ stdout, stderr }) => ({ code: 0, output: stdout + stderr }),
    (e: { code?: number; stdout?: string; stderr?: string }) => ({
      code: e.code ?? 1,
      output: (e.stdout ?? "") + (e.stderr ?? "")
    })
  )
  return { ...run, output: run.output.replace(/\x1b\[[0-9;]*m/g, "") }
}

describe("docs/api, the generated API reference", () => {
  it("every exported name has a doc comment, and the checked-in pages are what TypeDoc makes now", async () => {
    const out = path.join(scratch, "api")
    const { code, output } = await typedoc(out)
    const warnings = output.split("\n").filter((l) => /^\[(warning|error)\]/.test(l))
    // an undocumented export (or a stale `intentionallyNotDocumented` entry) is named here
    expect(warnings, "TypeDoc's warnings (typedoc.json treats them as errors)").toEqual([])
    expect(code, output).toBe(0)

    const fresh = filesUnder(out)
    const committed = filesUnder(checkedIn)
    const differing = [...new Set([...fresh, ...committed])]
      .sort()
      .filter((f) => !fresh.includes(f) || !committed.includes(f) || read(out, f) !== read(checkedIn, f))
    expect(differing, "docs/api is stale: run npm run docs:api and commit docs/api").toEqual([])
  }, 120_000)

  it("the pages hold no absolute path, timestamp or commit (they must be the same on any machine)", () => {
    const pages = filesUnder(checkedIn)
    expect(pages.length).toBeGreaterThan(0)
    const leaks = pages.filter((f) => {
      const text = read(checkedIn, f)
      return text.includes(root) || /\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(text) || /\/blob\/[0-9a-f]{40}\//.test(text)
    })
    expect(leaks).toEqual([])
  })
})

const read = (dir: string, file: string) => fs.readFileSync(path.join(dir, file), "utf8")
