/**
 * Every example in README.md and docs/*.md runs, as a user would run it (the convention is
 * docs/examples.md's; test/support/markdown-blocks.ts reads it):
 *
 * - a block whose info string has `not-run` is not run (the text near it says why); `sh`,
 *   `console` and `ts` blocks are; other languages are data or output;
 * - each page runs in a session of its own: a fresh network namespace (`unshare --net`), so the
 *   defaults 127.0.0.1:2379 and :8080 are free and nothing else on the machine is reached; a fresh
 *   directory with the packed package installed (`npm pack`, then `npm install` of the tarball:
 *   `npx etcd-effect` and `import … from "etcd-effect"` are the package's); HOME there too; and
 *   a fresh `npx etcd-effect serve` on the default URL, ready before the first block;
 * - `sh` blocks must exit 0; `console` transcripts must print what they show (`…` is any text);
 *   `ts` blocks are compiled with tsc against the package (strict, NodeNext) and run with node,
 *   must exit 0 with nothing on stderr, and print what the ```output block after them shows.
 *
 * Pages are found by listing docs/, so a page added later is run too.
 */
import { execFile, spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Block, blocksOf, matches, RUN_LANGS, transcriptOf } from "../support/markdown-blocks.js"
import { ensureBuilt, repoRoot } from "../server/support/process.js"

/** the pages users read: README.md and docs/*.md */
const documents = (): Array<string> => [
  "README.md",
  ...fs
    .readdirSync(path.join(repoRoot, "docs"))
    .filter((f) => f.endsWith(".md"))
    .sort()
    .map((f) => `docs/${f}`)
]

const pages = documents().map((file) => ({
  file,
  blocks: blocksOf(file, fs.readFileSync(path.join(repoRoot, file), "utf8"))
}))
const runnable = (b: Block) => RUN_LANGS.has(b.lang) && !b.notRun
const slug = (b: Block) => `${b.file.replace(/[^a-z0-9]+/gi, "-")}-${b.line}`

/** the module specifiers of a block that reach into the repository instead of the package */
export const sourceImports = (code: string): Array<string> =>
  [...code.matchAll(/\bfrom\s+["']((?:\.{1,2}\/)+[^"']*)["']|\bimport\s*\(?\s*["']((?:\.{1,2}\/)+[^"']*)["']/g)].map(
    (m) => (m[1] ?? m[2])!
  )

/** `timeout N ` at the start of a console command (a watch the reader ends after N seconds) */
const TIMEOUT = /^timeout ([0-9]+(?:\.[0-9]+)?) /
const boundedSeconds = (command: string): string | undefined => TIMEOUT.exec(command)?.[1]

const sh = (file: string, args: Array<string>, cwd: string, timeoutMs = 300_000): Promise<string> =>
  new Promise((resolve, reject) =>
    execFile(file, args, { cwd, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) =>
      error === null
        ? resolve(stdout)
        : reject(new Error(`${file} ${args.join(" ")}: ${error.message}\n${stdout}\n${stderr}`))
    )
  )

/** whether this machine gives us a network and pid namespace of our own */
const canIsolate = (): boolean =>
  spawnSync("unshare", ["--net", "--map-root-user", "--pid", "--fork", "--mount-proc", "true"], { stdio: "ignore" })
    .status === 0

/** One step of a page's session: what it runs and how its outcome is judged. */
interface Step {
  readonly block: Block
  /** the shell line that runs it (its output goes to out/<n>.txt, its exit code to out/<n>.rc) */
  readonly run: string
  readonly check: (out: string, rc: number, err: string) => string | undefined
}

describe("README and docs/: every example runs", () => {
  let root: string
  let app: string

  beforeAll(async () => {
    expect(
      canIsolate(),
      "the docs test needs `unshare --net --map-root-user --pid` (util-linux, user namespaces)"
    ).toBe(true)
    await ensureBuilt()
    root = fs.mkdtempSync(path.join(os.tmpdir(), "etcd-effect-docs-"))
    app = path.join(root, "app")
    fs.mkdirSync(app)
    // --ignore-scripts: `prepare` would rebuild dist/ under other test files' processes
    const packed = JSON.parse(
      await sh("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", root], repoRoot)
    )
    fs.writeFileSync(path.join(app, "package.json"), JSON.stringify({ name: "app", private: true, type: "module" }))
    const dev = JSON.parse(fs.readFileSync(path.join(repoRoot, "package.json"), "utf8")).devDependencies
    await sh(
      "npm",
      [
        "install",
        "--no-audit",
        "--no-fund",
        "--no-package-lock",
        "--prefer-offline",
        path.join(root, packed[0].filename),
        "@types/node@20",
        `@kubernetes/client-node@${dev["@kubernetes/client-node"]}`
      ],
      app
    )
    // every ts block a module of its own, compiled as a user's project would be
    const programs = pages.flatMap((p) => p.blocks.filter((b) => runnable(b) && b.lang === "ts"))
    fs.mkdirSync(path.join(app, "examples"))
    for (const b of programs) fs.writeFileSync(path.join(app, "examples", `${slug(b)}.ts`), `${b.code}\nexport {}\n`)
    fs.writeFileSync(
      path.join(app, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "ES2022",
          module: "NodeNext",
          moduleResolution: "NodeNext",
          strict: true,
          types: ["node"],
          lib: ["ES2022", "DOM"],
          skipLibCheck: true,
          outDir: "out"
        },
        include: ["examples/*.ts"]
      })
    )
    await sh(path.join(repoRoot, "node_modules/.bin/tsc"), ["-p", "."], app).catch((e: Error) => {
      throw new Error(`the ts examples do not compile against the package:\n${e.message}`)
    })
  }, 600_000)

  // an npm install of thousands of files: removed off the event loop (rmSync here blocked the worker
  // past vitest's 60 s RPC and hook timeouts on a loaded machine), and no budget: it waits on the disk only
  afterAll(async () => {
    if (root !== undefined) await fs.promises.rm(root, { recursive: true, force: true })
  }, 0)

  it("reads the convention: languages, not-run, transcripts, output blocks, … in output", () => {
    const md = [
      "text",
      "```sh not-run — it runs for ever",
      "npm start",
      "```",
      "```console",
      "$ a \\",
      "  --b",
      "one",
      "$ cat <<'EOF'",
      "$ not a command",
      "EOF",
      "$ server &",
      "```",
      "```ts",
      "console.log(1)",
      "```",
      "",
      "```output",
      "1",
      "```",
      "```yaml",
      "a: 1",
      "```"
    ].join("\n")
    const blocks = blocksOf("x.md", md)
    expect(blocks.map((b) => [b.lang, b.notRun, b.line])).toEqual([
      ["sh", true, 2],
      ["console", false, 5],
      ["ts", false, 14],
      ["yaml", false, 21]
    ])
    expect(blocks[0]!.reason).toBe("it runs for ever")
    expect(blocks[1]!.reason).toBe("")
    expect(blocks[2]!.output).toBe("1\n")
    expect(transcriptOf(blocks[1]!.code)).toEqual([
      { command: "a \\\n  --b", expected: ["one"], background: false },
      { command: "cat <<'EOF'\n$ not a command\nEOF", expected: [], background: false },
      { command: "server &", expected: [], background: true }
    ])
    expect(matches(["a…c", "…", "end"], "abbc\nx\ny\nend\n")).toBe(true)
    expect(matches(["a…c"], "abbc\nmore\n")).toBe(false)
    expect(matches([], "")).toBe(true)
    expect(matches([], "x")).toBe(false)
  })

  it("finds the pages and their blocks; each names its language, and why when it is not run", () => {
    expect(pages.map((p) => p.file)).toContain("README.md")
    expect(pages.flatMap((p) => p.blocks).filter(runnable).length).toBeGreaterThan(20)
    const unlabelled = pages.flatMap((p) =>
      p.blocks.flatMap((b) =>
        b.lang === ""
          ? [`${p.file}:${b.line}: no language`]
          : b.notRun && b.reason === ""
            ? [`${p.file}:${b.line}: not-run without a reason`]
            : []
      )
    )
    expect(unlabelled).toEqual([])
  })

  it("examples import the package by its name", () => {
    const offenders = pages.flatMap((p) =>
      p.blocks.flatMap((b) => (b.lang === "ts" ? sourceImports(b.code).map((s) => `${p.file}:${b.line}: ${s}`) : []))
    )
    expect(offenders).toEqual([])
  })

  for (const page of pages.filter((p) => p.blocks.some(runnable))) {
    it(`${page.file}: its examples run and print what they show`, async () => {
      const session = fs.mkdtempSync(path.join(root, "session-"))
      const work = path.join(session, "work")
      for (const d of [work, path.join(session, "home"), path.join(session, "cmd"), path.join(session, "out")]) {
        fs.mkdirSync(d)
      }
      fs.symlinkSync(path.join(app, "node_modules"), path.join(work, "node_modules"))
      fs.writeFileSync(path.join(work, "package.json"), JSON.stringify({ name: "work", private: true, type: "module" }))
      const steps: Array<Step> = []
      const add = (
        block: Block,
        code: string,
        kind: "console" | "background" | "bounded" | "sh" | "ts",
        check: Step["check"],
        bound = { lines: 0, seconds: "0" }
      ) => {
        const n = steps.length
        const cmd = path.join(session, "cmd", `${n}.sh`)
        fs.writeFileSync(cmd, code)
        const out = `${session}/out/${n}`
        const run =
          kind === "bounded"
            ? // `timeout N cmd`: the reader waits until the lines shown are there (however long the
              // machine takes to start the program), then N seconds more for any it does not show,
              // then ends it as timeout would: the check does not depend on the machine's speed
              `setsid bash ${cmd} > ${out}.txt 2>&1 < /dev/null & pid=$!; ` +
              `for i in $(seq 1200); do [ "$(wc -l < ${out}.txt)" -ge ${bound.lines} ] && break; kill -0 $pid 2> /dev/null || break; sleep 0.1; done; ` +
              `sleep ${bound.seconds}; kill -TERM -- -$pid 2> /dev/null; wait $pid; echo 124 > ${out}.rc`
            : kind === "ts"
              ? `timeout 120 node ${app}/out/${slug(block)}.js > ${out}.txt 2> ${out}.err < /dev/null; echo $? > ${out}.rc`
              : kind === "sh"
                ? `( set -e; source ${cmd} ) > ${out}.txt 2>&1 < /dev/null; echo $? > ${out}.rc`
                : kind === "background"
                  ? `{ eval "$(cat ${cmd})"; } > ${out}.txt 2>&1 < /dev/null; echo 0 > ${out}.rc; ` +
                    `for i in $(seq 300); do [ -s ${out}.txt ] && break; sleep 0.1; done; sleep 0.3`
                  : `{ eval "$(cat ${cmd})"; } > ${out}.txt 2>&1 < /dev/null; echo $? > ${out}.rc`
        steps.push({ block, run, check })
      }
      for (const b of page.blocks.filter(runnable)) {
        if (b.lang === "console") {
          for (const c of transcriptOf(b.code)) {
            const seconds = c.background ? undefined : boundedSeconds(c.command)
            const bounded = seconds !== undefined
            add(
              b,
              bounded ? c.command.replace(TIMEOUT, "") : c.command,
              c.background ? "background" : bounded ? "bounded" : "console",
              (out) =>
                c.background || matches(c.expected, out)
                  ? undefined
                  : `$ ${c.command}\n--- shows:\n${c.expected.join("\n")}\n--- printed:\n${out}`,
              { lines: c.expected.length, seconds: seconds ?? "0" }
            )
          }
        } else if (b.lang === "sh") {
          add(b, b.code, "sh", (out, rc) => (rc === 0 ? undefined : `exit code ${rc}:\n${out}`))
        } else {
          add(b, b.code, "ts", (out, rc, err) =>
            rc === 0 && err === "" && (b.output === undefined || matches(b.output.replace(/\n$/, "").split("\n"), out))
              ? undefined
              : `exit code ${rc}\n--- stderr:\n${err}\n--- shows:\n${b.output ?? "(anything)"}\n--- printed:\n${out}`
          )
        }
      }
      const script = [
        "set +e",
        "ip link set lo up",
        `export HOME=${session}/home`,
        `cd ${work}`,
        `npx etcd-effect serve --data-dir ${session}/default.etcd > ${session}/server.log 2>&1 &`,
        "for i in $(seq 600); do curl -sf http://127.0.0.1:2379/health > /dev/null && break; sleep 0.1; done",
        ...steps.map((s) => s.run)
      ].join("\n")
      fs.writeFileSync(path.join(session, "session.sh"), `${script}\n`)
      const finished = await new Promise<number | null>((resolve) => {
        const child = spawn(
          "unshare",
          ["--net", "--map-root-user", "--pid", "--fork", "--mount-proc", "bash", path.join(session, "session.sh")],
          { stdio: "ignore" }
        )
        const timer = setTimeout(() => child.kill("SIGKILL"), 900_000)
        child.on("exit", (code) => {
          clearTimeout(timer)
          resolve(code)
        })
      })
      const read = (f: string) => (fs.existsSync(f) ? fs.readFileSync(f, "utf8") : "")
      const failures = steps.flatMap((s, n) => {
        const out = `${session}/out/${n}`
        if (!fs.existsSync(`${out}.rc`))
          return [`${s.block.file}:${s.block.line}: did not run (session ended ${finished})`]
        const problem = s.check(read(`${out}.txt`), Number(read(`${out}.rc`).trim()), read(`${out}.err`))
        return problem === undefined ? [] : [`${s.block.file}:${s.block.line} (${s.block.lang}): ${problem}`]
      })
      expect(failures, `server log:\n${read(`${session}/server.log`).slice(-2000)}`).toEqual([])
    }, 900_000)
  }
})
