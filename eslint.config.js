// ESLint 9 flat config: a small set of rules that each catch a real defect (see docs/decisions.md,
// "Formatter and linter"). Formatting is Prettier's (.prettierrc.json), checked by `npm run lint`.
import js from "@eslint/js"
import tseslint from "typescript-eslint"

export default tseslint.config(
  { ignores: ["dist/", "node_modules/", ".readme-examples-*/", "**/*.d.ts"] },
  {
    files: ["**/*.ts"],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname }
    },
    plugins: { "@typescript-eslint": tseslint.plugin },
    linterOptions: { reportUnusedDisableDirectives: "error" },
    rules: {
      // a promise nobody awaits loses its failure (type-aware)
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none" }
      ],
      eqeqeq: ["error", "always", { null: "ignore" }],
      "no-async-promise-executor": "error",
      "no-compare-neg-zero": "error",
      "no-cond-assign": "error",
      "no-constant-binary-expression": "error",
      "no-debugger": "error",
      "no-dupe-else-if": "error",
      "no-duplicate-case": "error",
      "no-empty-pattern": "error",
      "no-loss-of-precision": "error",
      "no-self-assign": "error",
      "no-self-compare": "error",
      "no-sparse-arrays": "error",
      "no-template-curly-in-string": "error",
      "no-unsafe-finally": "error",
      "no-unsafe-negation": "error",
      "use-isnan": "error",
      "valid-typeof": "error"
    }
  },
  {
    // an Effect run in src/ needs an owner (a layer's runtime, a FiberSet of a scope): each one
    // left is disabled on its line with `-- why` (test/architecture/lint.test.ts checks the why)
    files: ["src/**/*.ts"],
    rules: {
      "no-restricted-properties": [
        "error",
        ...["Effect", "Runtime"].flatMap((object) =>
          ["runSync", "runSyncExit", "runFork", "runPromise", "runPromiseExit", "runCallback"].map((property) => ({
            object,
            property,
            message:
              "an Effect run in src/ has no owner: fork it in a scope (FiberSet.runtime, forkScoped) or use a plain call; if it must stay, disable this line with `-- why`"
          }))
        )
      ]
    }
  },
  {
    files: ["**/*.js", "**/*.mjs"],
    ...js.configs.recommended,
    languageOptions: { globals: { process: "readonly", console: "readonly" } }
  }
)
