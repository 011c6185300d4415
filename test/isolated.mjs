#!/usr/bin/env node
/**
 * `npm run test:isolated`: every test file alone, one `vitest run FILE --project P` per file and
 * project (a file under test/server/ or test/client/ runs in both "lean" and "grpc-js", as in
 * vitest.config.ts), one after another, each in a fresh vitest process; then the files that failed
 * and a summary. A file that passes in the suite but fails alone leans on state another file left
 * behind, or on time the files before it took: the class of defect this finds.
 *
 *   npm run test:isolated                                  every file, both projects
 *   npm run test:isolated -- test/kubernetes/apiserver     only files whose path contains it
 *   npm run test:isolated -- --project lean --repeat 5 test/watch/leaks.test.ts
 *   npm run test:isolated -- --jobs 2                      two files at a time (each still alone
 *                                                          in its process; the machine is busier)
 *
 * The environment is passed on (REQUIRE_ETCD=1 makes the etcd-oracle tests fail instead of
 * skipping). Each run's output is kept under a temporary directory; a failed run's failures are
 * printed. Exits 1 when any run failed.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const vitest = path.join(root, "node_modules/vitest/vitest.mjs")

const usage = "usage: npm run test:isolated -- [--project lean|grpc-js] [--repeat N] [--jobs N] [PATH-PART...]"
const args = process.argv.slice(2)
let project
let repeat = 1
let jobs = 1
const filters = []
for (let i = 0; i < args.length; i++) {
  const a = args[i]
  if (a === "--project") project = args[++i]
  else if (a === "--repeat") repeat = Number(args[++i])
  else if (a === "--jobs") jobs = Number(args[++i])
  else if (a === "--help" || a === "-h") {
    console.log(usage)
    process.exit(0)
  } else if (a.startsWith("-")) {
    console.error(`test:isolated: unknown flag ${a}\n${usage}`)
    process.exit(2)
  } else filters.push(a)
}
for (const [flag, n] of [
  ["--repeat", repeat],
  ["--jobs", jobs]
]) {
  if (!Number.isInteger(n) || n < 1) {
    console.error(`test:isolated: ${flag} wants a positive integer\n${usage}`)
    process.exit(2)
  }
}

/** Runs vitest to completion; resolves with its exit code. */
const run = (argv, logFile) =>
  new Promise((resolve) => {
    const log = fs.openSync(logFile, "w")
    const child = spawn(process.execPath, [vitest, ...argv], { cwd: root, stdio: ["ignore", log, log] })
    child.on("exit", (code, signal) => {
      fs.closeSync(log)
      resolve(code ?? (signal === null ? 1 : 128))
    })
  })

const logDir = fs.mkdtempSync(path.join(os.tmpdir(), "etcd-effect-isolated-"))

// the (file, project) pairs, from vitest's own view of the config
const listFile = path.join(logDir, "list.json")
if ((await run(["list", "--filesOnly", `--json=${listFile}`], path.join(logDir, "list.log"))) !== 0) {
  console.error(`test:isolated: vitest list failed; see ${path.join(logDir, "list.log")}`)
  process.exit(1)
}
const specs = JSON.parse(fs.readFileSync(listFile, "utf8"))
  .map((s) => ({ file: path.relative(root, s.file), project: s.projectName }))
  .filter((s) => project === undefined || s.project === project)
  .filter((s) => filters.length === 0 || filters.some((f) => s.file.includes(f)))
  .sort((a, b) => a.file.localeCompare(b.file) || a.project.localeCompare(b.project))
if (specs.length === 0) {
  console.error("test:isolated: no test file matches")
  process.exit(2)
}

const results = []
const started = Date.now()
const total = specs.length * repeat
const queue = []
for (let round = 1; round <= repeat; round++) for (const spec of specs) queue.push({ spec, n: queue.length + 1 })

/** One file alone in a fresh vitest process; records and prints its result. */
const runOne = async ({ spec, n }) => {
  {
    const name = `${spec.file} [${spec.project}]`
    const base = `${n}-${spec.file.replace(/[/.]/g, "_")}-${spec.project}`
    const report = path.join(logDir, `${base}.json`)
    const log = path.join(logDir, `${base}.log`)
    const t0 = Date.now()
    // the absolute path: vitest's filter is a substring of the path, and this one matches only the file
    const code = await run(
      [
        "run",
        path.join(root, spec.file),
        "--project",
        spec.project,
        "--reporter=default",
        "--reporter=json",
        `--outputFile.json=${report}`
      ],
      log
    )
    const seconds = (Date.now() - t0) / 1000
    let passed = 0
    let failed = 0
    let skipped = 0
    const failures = []
    if (fs.existsSync(report)) {
      const r = JSON.parse(fs.readFileSync(report, "utf8"))
      passed = r.numPassedTests
      failed = r.numFailedTests
      skipped = r.numPendingTests + (r.numTodoTests ?? 0)
      for (const f of r.testResults) {
        if (f.status === "failed" && f.assertionResults.length === 0) failures.push(`(file) ${f.message}`)
        for (const a of f.assertionResults)
          if (a.status === "failed") failures.push(`${a.fullName}: ${(a.failureMessages[0] ?? "").split("\n")[0]}`)
      }
    }
    const ok = code === 0 && failures.length === 0 && passed + skipped > 0
    results.push({ name, ok, passed, failed, skipped, seconds, log, failures })
    const progress = `[${results.length}/${total}]`
    const counts = `${passed} passed${failed > 0 ? `, ${failed} failed` : ""}${skipped > 0 ? `, ${skipped} skipped` : ""}`
    console.log(`${progress} ${ok ? "ok  " : "FAIL"} ${name}  ${counts}  ${seconds.toFixed(1)} s`)
    if (!ok) {
      for (const f of failures) console.log(`       ${f}`)
      if (failures.length === 0) console.log(`       vitest exited ${code} with no failed test (see the log)`)
      console.log(`       log: ${log}`)
    }
  }
}

// `jobs` runners take the next file until none is left
await Promise.all(
  Array.from({ length: jobs }, async () => {
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) await runOne(next)
  })
)

const bad = results.filter((r) => !r.ok)
const sum = (k) => results.reduce((n, r) => n + r[k], 0)
const minutes = ((Date.now() - started) / 60_000).toFixed(1)
console.log("")
if (bad.length > 0) {
  console.log("failed alone:")
  for (const r of bad) console.log(`  ${r.name}  (${r.failed} failed; log ${r.log})`)
}
console.log(
  `test:isolated: ${results.length - bad.length} of ${results.length} runs green (${specs.length} file/project pairs × ${repeat}), ` +
    `${bad.length} failed; tests ${sum("passed")} passed, ${sum("failed")} failed, ${sum("skipped")} skipped; ${minutes} min; logs ${logDir}`
)
process.exit(bad.length > 0 ? 1 : 0)
