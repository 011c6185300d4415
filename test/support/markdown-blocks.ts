/**
 * The code blocks of a markdown page as the docs test (test/architecture/docs-examples.test.ts)
 * runs them; the convention is docs/examples.md's:
 *
 * - a fence's info string is its language, then words: ```` ```sh not-run — why ````; every
 *   fence names a language; `not-run` among the words: the block is not run, and the words after
 *   it say why;
 * - `sh`: a script, run with `set -e`; it must exit 0;
 * - `console`: a transcript: `$ command` lines (a trailing `\` continues one, and so does a
 *   here-document, up to its delimiter), each followed by
 *   what it prints, stdout and stderr together; in a printed line `…` stands for any text, and a
 *   line that is only `…` for any lines; a command ending in `&` runs in the background, prints
 *   nothing here, and the next command waits until it printed its first line (30 s at most);
 * - `ts`: a program, compiled against the packed package and run; it must exit 0, print nothing on
 *   stderr, and print on stdout what the ```` ```output ```` block right after it shows, if any;
 * - anything else (yaml, json, text, output, none) is data or output, not run.
 */

export interface Block {
  readonly file: string
  /** the fence's line, 1-based */
  readonly line: number
  readonly lang: string
  readonly notRun: boolean
  /** the words after `not-run`: why the block is not run */
  readonly reason: string
  readonly code: string
  /** a ts block's expected stdout: the ```output block right after it */
  readonly output?: string | undefined
}

export const RUN_LANGS = new Set(["sh", "console", "ts"])

/** The fenced blocks of a page, in order, each with its language and words. */
export const blocksOf = (file: string, markdown: string): Array<Block> => {
  const lines = markdown.split("\n")
  const blocks: Array<Block & { readonly end: number }> = []
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)(.*)$/.exec(lines[i]!)
    if (open === null) continue
    const words = open[2]!
      .trim()
      .split(/\s+/)
      .filter((w) => w !== "")
    const body: Array<string> = []
    let j = i + 1
    while (j < lines.length && !lines[j]!.startsWith("```")) body.push(lines[j++]!)
    blocks.push({
      file,
      line: i + 1,
      lang: open[1]!,
      notRun: words.includes("not-run"),
      reason: words.includes("not-run")
        ? words
            .slice(words.indexOf("not-run") + 1)
            .join(" ")
            .replace(/^[—–:-]\s*/, "")
        : "",
      code: body.length === 0 ? "" : `${body.join("\n")}\n`,
      end: j
    })
    i = j
  }
  // an ```output block right after a ts block (blank lines between) is that program's output
  return blocks.flatMap((b, k) => {
    if (b.lang === "output") return []
    const next = blocks[k + 1]
    const between = next === undefined ? [] : lines.slice(b.end + 1, next.line - 1)
    const output =
      b.lang === "ts" && next?.lang === "output" && between.every((l) => l.trim() === "") ? next.code : undefined
    const { end: _end, ...block } = b
    return [{ ...block, output }]
  })
}

export interface TranscriptCommand {
  readonly command: string
  readonly expected: ReadonlyArray<string>
  readonly background: boolean
}

/** A console block's commands, each with the lines it prints. */
export const transcriptOf = (code: string): Array<TranscriptCommand> => {
  const out: Array<{ command: string; expected: Array<string> }> = []
  const lines = code.replace(/\n$/, "").split("\n")
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!
    if (line.startsWith("$ ")) {
      let command = line.slice(2)
      // the backslash stays: bash reads the lines as one
      while (command.endsWith("\\") && i + 1 < lines.length) command = `${command}\n${lines[++i]!}`
      // a here-document's lines belong to the command, up to its delimiter
      const heredoc = /<<-?\s*['"]?(\w+)['"]?/.exec(command)
      if (heredoc !== null) {
        while (i + 1 < lines.length) {
          const next = lines[++i]!
          command += `\n${next}`
          if (next.trim() === heredoc[1]) break
        }
      }
      out.push({ command, expected: [] })
    } else if (out.length > 0) out.at(-1)!.expected.push(line)
    else if (line.trim() !== "") throw new Error(`a transcript starts with "$ ": ${JSON.stringify(line)}`)
  }
  return out.map(({ command, expected }) => ({
    command,
    expected,
    background: /&\s*(#.*)?$/.test(command) && !/&&\s*(#.*)?$/.test(command)
  }))
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/** Whether `actual` is what `expected` shows: `…` in a line is any text, a line of `…` any lines. */
export const matches = (expected: ReadonlyArray<string>, actual: string): boolean => {
  const pattern = expected
    .map((l) => (l.trim() === "…" ? "(?:[^\\n]*\\n)*?" : `${l.split("…").map(escape).join("[^\\n]*")}\\n`))
    .join("")
  const text = actual === "" || actual.endsWith("\n") ? actual : `${actual}\n`
  return new RegExp(`^${pattern}$`).test(text)
}
