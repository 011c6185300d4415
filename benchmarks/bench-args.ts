/**
 * The command line of the bench:* programs that take node's parseArgs options: `-h/--help` prints
 * the usage, a flag parseArgs refuses or a count that is not a positive integer prints one line
 * (with the usage for the former) and exits 1.
 */

/** parseArgs' values, or the usage on --help, or exit 1 with parseArgs' reason. */
export const benchArgs = <V extends { readonly help?: boolean | undefined }>(
  script: string,
  usage: string,
  parse: () => { readonly values: V }
): V => {
  let values: V
  try {
    values = parse().values
  } catch (e) {
    process.stderr.write(`${script}: ${e instanceof Error ? e.message : String(e)}\n${usage}\n`)
    return process.exit(1)
  }
  if (values.help === true) {
    process.stdout.write(`${usage}\n`)
    process.exit(0)
  }
  return values
}

/** `value` as a positive integer, or exit 1 naming the flag. */
export const positiveInt = (script: string, flag: string, value: string | undefined): number => {
  const n = Number(value)
  if (!Number.isInteger(n) || n < 1) {
    process.stderr.write(`${script}: ${flag} must be a positive integer, got ${value}\n`)
    process.exit(1)
  }
  return n
}
