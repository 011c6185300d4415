/**
 * Every TypeScript example in README.md and docs/*.md type-checks against the project as users
 * import it: `etcd-effect` resolves to src/index.ts and `etcd-effect/bench` to src/bench/index.ts,
 * as package.json's `exports` map them in the built package. An example that imports the sources
 * (`./src/…`) fails, and so does one that drifts from the API.
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

/** the markdown files whose examples users read: README.md and docs/*.md */
const documents = (): Array<string> => [
  "README.md",
  ...fs
    .readdirSync(path.join(root, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`)
]

/** the ts blocks of every document, each with where it came from */
const examples = (): Array<{ readonly file: string; readonly code: string }> =>
  documents().flatMap((file) =>
    tsBlocks(fs.readFileSync(path.join(root, file), "utf8")).map((code) => ({ file, code }))
  )

/** the module specifiers of a block that reach into the repository instead of the package */
export const sourceImports = (code: string): Array<string> =>
  [...code.matchAll(/\bfrom\s+["']((?:\.{1,2}\/)+[^"']*)["']|\bimport\s*\(?\s*["']((?:\.{1,2}\/)+[^"']*)["']/g)].map(
    (m) => (m[1] ?? m[2])!
  )

describe("README examples", () => {
  it("finds the blocks", () => {
    expect(tsBlocks("a\n```ts\nconst x = 1\n```\nb\n```sh\nls\n```\n```ts\nlet y\n```")).toEqual([
      "const x = 1\n",
      "let y\n"
    ])
  })

  it("examples import the package by its name, never the repository's files", () => {
    expect(
      sourceImports('import { serve } from "./src/server/index.js"\nimport { Client } from "etcd-effect"')
    ).toEqual(["./src/server/index.js"])
    const offenders = examples().flatMap(({ code, file }) => sourceImports(code).map((s) => `${file}: ${s}`))
    expect(offenders).toEqual([])
  })

  it("every ts block type-checks against the package's API", async () => {
    const blocks = examples().map((e) => e.code)
    expect(blocks.length).toBeGreaterThan(3)
    // inside the repository, so `effect` and the other packages resolve from its node_modules
    const dir = fs.mkdtempSync(path.join(root, ".readme-examples-"))
    try {
      blocks.forEach((code, i) => {
        const rewritten = code
          .replace(/from "etcd-effect"/g, `from ${JSON.stringify(path.join(root, "src/index.js"))}`)
          .replace(/from "etcd-effect\/bench"/g, `from ${JSON.stringify(path.join(root, "src/bench/index.js"))}`)
        // each block is a module of its own
        fs.writeFileSync(path.join(dir, `example-${i}.ts`), `${rewritten}\nexport {}\n`)
      })
      fs.writeFileSync(
        path.join(dir, "tsconfig.json"),
        JSON.stringify({
          extends: path.join(root, "tsconfig.json"),
          compilerOptions: {
            noEmit: true,
            rootDir: "/",
            noUnusedLocals: false,
            typeRoots: [path.join(root, "node_modules/@types")]
          },
          include: [path.join(dir, "*.ts")]
        })
      )
      const result = await new Promise<{ code: number; out: string }>((resolve) =>
        execFile(
          path.join(root, "node_modules/.bin/tsc"),
          ["-p", dir],
          { cwd: root, timeout: 240_000 },
          (e, stdout, stderr) => resolve({ code: e === null ? 0 : ((e.code as number) ?? 1), out: stdout + stderr })
        )
      )
      expect(
        result.out
          .split("\n")
          .filter((l) => l.includes("example-"))
          .join("\n")
      ).toBe("")
      expect(result.code).toBe(0)
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  }, 300_000)
})
