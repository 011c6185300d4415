export * from "./bolt-check.js"
export * from "./bolt-error.js"
export * from "./bolt-reader.js"
export * from "./bolt-writer.js"
