/**
 * House habits: the rules of eslint.config.js catch what they are there for, and each Effect run
 * left in src/ says why. The whole tree's `npm run lint` (ESLint's rules, then Prettier's check of
 * .prettierrc.json) is a step of .ci/run, not a test here: it is a minute of CPU on a quiet machine
 * and several at load 20, and a budget for it failed on a loaded machine for no fault of the code
 * (issue 24). These tests lint planted code through ESLint's API with the project's own config,
 * typed in a program of the planted file and its libs, not the project's 2,500 files: seconds of
 * CPU, and no budget of their own (a computation with nothing to wait for cannot stall; its time
 * only scales with the machine's load). Planted code never touches the tree.
 */
import { ESLint } from "eslint"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import tseslint from "typescript-eslint"
import { describe, expect, it } from "vitest"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")

/** the messages eslint.config.js gives `text` as if it were the file `file` */
const lintAs = async (file: string, text: string, overrideConfig: ESLint.Options["overrideConfig"]) => {
  const eslint = new ESLint({ cwd: root, overrideConfig })
  const [result] = await eslint.lintText(text, { filePath: path.join(root, file), warnIgnored: true })
  return result!.messages.map((m) => `${m.ruleId ?? "(parse)"}: ${m.message}`)
}

/**
 * A file outside tsconfig.json's include, typed in a program of its own (the project service's
 * default project) rather than the whole project's: the type-aware rules run, in seconds.
 */
const PROBE = "lint-probe/planted.ts"
const ownProgram: ESLint.Options["overrideConfig"] = {
  files: [PROBE],
  languageOptions: { parserOptions: { projectService: { allowDefaultProject: [PROBE] } } }
}

/** src/'s rules without type information (no-restricted-properties needs none) */
const untyped: ESLint.Options["overrideConfig"] = [
  { files: ["src/**/*.ts"], ...tseslint.configs.disableTypeChecked }
] as ESLint.Options["overrideConfig"]

const sources = (dir: string): Array<string> =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name)
    return e.isDirectory() ? sources(p) : e.name.endsWith(".ts") ? [p] : []
  })

describe("lint", () => {
  it("the linter sees a planted defect, the type-aware rule included", async () => {
    const messages = await lintAs(
      PROBE,
      "export const f = (a: number, b: string) => a == Number(b)\nPromise.resolve(1)\n",
      ownProgram
    )
    expect(messages.map((m) => m.split(":")[0]).sort()).toEqual(["@typescript-eslint/no-floating-promises", "eqeqeq"])
    // and clean code passes
    expect(await lintAs(PROBE, "export const f = (a: number, b: string) => a === Number(b)\n", ownProgram)).toEqual([])
  }, 0)

  it("an Effect run without an owner in src/ is refused: a planted Effect.runSync and Runtime.runFork", async () => {
    const planted =
      'import { Effect, Runtime } from "effect"\n' +
      "export const one = Effect.runSync(Effect.succeed(1))\n" +
      "export const fork = Effect.map(Effect.runtime<never>(), (rt) => Runtime.runFork(rt))\n"
    const messages = await lintAs("src/errors.ts", planted, untyped)
    expect(messages.filter((m) => m.startsWith("no-restricted-properties")).map((m) => m.split("'")[1])).toEqual([
      "Effect.runSync",
      "Runtime.runFork"
    ])
    // tests own their runs: the rule is for src/ only
    expect(await lintAs(PROBE, planted, ownProgram)).toEqual([])
  }, 0)

  it("each Effect run left in src/ says why on its line (the allow-list)", () => {
    const allowed = sources(path.join(root, "src")).flatMap((f) =>
      fs
        .readFileSync(f, "utf8")
        .split("\n")
        .filter((l) => l.includes("eslint-disable") && l.includes("no-restricted-properties"))
        .map((l) => ({ file: path.relative(root, f), reason: l.split(" -- ")[1]?.trim() ?? "" }))
    )
    expect(allowed.filter((a) => a.reason.length < 20)).toEqual([])
    // the five left after issue 30 (docs/architecture.md lists them); a new one is a decision, not a habit
    expect(allowed.map((a) => a.file).sort()).toEqual([
      "src/kubernetes/cacher/cache-watcher.ts",
      "src/mvcc/kvstore.ts",
      "src/server/client-tls.ts",
      "src/server/grpc-bridge.ts",
      "src/watch/watch-stream.ts"
    ])
  })
})
