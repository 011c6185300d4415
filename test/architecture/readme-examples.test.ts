/**
 * Every TypeScript example in README.md type-checks against the project as users import it:
 * `etcd-effect` resolves to src/index.ts, `./src/…` to the sources. A README that drifts from the
 * API fails here.
 */
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")

/** the ```ts blocks of a markdown text */
export const tsBlocks = (markdown: string): Array<string> =>
  [...markdown.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!)

describe("README examples", () => {
  it("finds the blocks", () => {
    expect(tsBlocks("a\n```ts\nconst x = 1\n```\nb\n```sh\nls\n```\n```ts\nlet y\n```")).toEqual(["const x = 1\n", "let y\n"])
  })

  it("every ts block type-checks against the package's API", async () => {
    const blocks = tsBlocks(fs.readFileSync(path.join(root, "README.md"), "utf8"))
    expect(blocks.length).toBeGreaterThan(3)
    // inside the repository, so `effect` and the other packages resolve from its node_modules
    const dir = fs.mkdtempSync(path.join(root, ".readme-examples-"))
    try {
      blocks.forEach((code, i) => {
        const rewritten = code
          .replace(/from "etcd-effect"/g, `from ${JSON.stringify(path.join(root, "src/index.js"))}`)
          .replace(/from "\.\/src\//g, `from "${root}/src/`)
        // each block is a module of its own
        fs.writeFileSync(path.join(dir, `example-${i}.ts`), `${rewritten}\nexport {}\n`)
      })
      fs.writeFileSync(
        path.join(dir, "tsconfig.json"),
        JSON.stringify({
          extends: path.join(root, "tsconfig.json"),
          compilerOptions: { noEmit: true, rootDir: "/", noUnusedLocals: false, typeRoots: [path.join(root, "node_modules/@types")] },
          include: [path.join(dir, "*.ts")]
        })
      )
      const result = await new Promise<{ code: number; out: string }>((resolve) =>
        execFile(path.join(root, "node_modules/.bin/tsc"), ["-p", dir], { cwd: root, timeout: 240_000 }, (e, stdout, stderr) =>
          resolve({ code: e === null ? 0 : (e.code as number) ?? 1, out: stdout + stderr }))
      )
      expect(result.out.split("\n").filter((l) => l.includes("example-")).join("\n")).toBe("")
      expect(result.code).toBe(0)
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  }, 300_000)
})
