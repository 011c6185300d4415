/**
 * House habits in CI: `npm run lint` (ESLint's rules of eslint.config.js, then Prettier's check of
 * .prettierrc.json) passes on the whole tree. `npm run format` fixes what Prettier finds.
 */
import { execFile } from "node:child_process"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")

const run = (file: string, args: Array<string>): Promise<{ code: number; out: string }> =>
  new Promise((resolve) =>
    execFile(file, args, { cwd: root, timeout: 400_000, maxBuffer: 64 * 1024 * 1024 }, (e, stdout, stderr) =>
      resolve({ code: e === null ? 0 : typeof e.code === "number" ? e.code : 1, out: stdout + stderr })
    )
  )

describe("lint", () => {
  it("the linter sees a planted defect", async () => {
    // --stdin lints the text as if it were this file's (the type-aware rules need a file of the
    // project), so the planted code never touches the tree
    const planted = "export const f = (a: number, b: string) => a == Number(b)\nPromise.resolve(1)\n"
    const result = await new Promise<{ code: number; out: string }>((resolve) => {
      const child = execFile(
        path.join(root, "node_modules/.bin/eslint"),
        ["--stdin", "--stdin-filename", "test/architecture/lint.test.ts", "--no-warn-ignored"],
        { cwd: root, timeout: 200_000 },
        (e, stdout, stderr) =>
          resolve({ code: e === null ? 0 : typeof e.code === "number" ? e.code : 1, out: stdout + stderr })
      )
      child.stdin!.end(planted)
    })
    expect(result.out).toContain("eqeqeq")
    expect(result.out).toContain("no-floating-promises")
    expect(result.code).toBe(1)
  }, 240_000)

  it("npm run lint passes: eslint's rules and prettier's format", async () => {
    const result = await run("npm", ["run", "-s", "lint"])
    expect(
      result.out
        .split("\n")
        .filter((l) => /error|warn|\[warn\]/i.test(l) && !/npm warn Unknown user config/.test(l))
        .slice(0, 40)
        .join("\n")
    ).toBe("")
    expect(result.code).toBe(0)
  }, 420_000)
})
