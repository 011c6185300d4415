/**
 * Before any test file: build dist/ once if the sources are newer, so no test spends its own
 * timeout on a build (the tests that run the program then find it fresh).
 */
import { ensureBuilt } from "./server/support/process.js"

export default async function setup(): Promise<void> {
  await ensureBuilt()
}
