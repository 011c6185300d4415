/**
 * olekukonko/tablewriter's rendering as etcdutl configures it for `-w table`: upper-case headers
 * centred, cells aligned right, one space of padding, `+---+` borders.
 */
export const snapshotTable = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  const heads = header.map((h) => h.toUpperCase())
  const widths = heads.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)))
  const line = `+${widths.map((w) => "-".repeat(w + 2)).join("+")}+\n`
  const centre = (s: string, w: number) => {
    const left = Math.floor((w - s.length) / 2)
    return " ".repeat(left) + s + " ".repeat(w - s.length - left)
  }
  const head = `|${heads.map((h, i) => ` ${centre(h, widths[i]!)} `).join("|")}|\n`
  const body = rows.map((r) => `|${widths.map((w, i) => ` ${(r[i] ?? "").padStart(w)} `).join("|")}|\n`).join("")
  return line + head + line + body + line
}
