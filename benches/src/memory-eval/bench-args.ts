/**
 * `npm run bench -- --only memory-eval [--size tiny|small|medium|large] [evaluation options]`:
 * the bench harness's flags turned into the evaluation runner's (`run.ts`). `--size tiny` runs
 * the smoke subset, any other size the whole set; every other flag (`--category`, `--configs`,
 * `--base-url`, `--threads`, `--out <file.json>`, …) is the runner's own.
 * @module
 */

/** The `--only` value that selects the evaluation (`--only memory` still selects the `memory.`
 * timing rows). */
const ONLY = "memory-eval";

/** The runner's arguments when the bench harness's `argv` asks for the memory evaluation, else
 * `undefined`. */
export function evalArgs(argv: readonly string[]): string[] | undefined {
  const only = argv.indexOf("--only");
  if (only < 0 || argv[only + 1] !== ONLY) return undefined;
  const out: string[] = [];
  let smoke = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    if (a === "--only") i++;
    else if (a === "--size") {
      const size = argv[++i];
      if (!size || !["tiny", "small", "medium", "large"].includes(size))
        throw new Error("--size must be one of tiny, small, medium, large");
      smoke = size === "tiny";
    } else out.push(a);
  }
  return smoke && !out.includes("--smoke") ? ["--smoke", ...out] : out;
}
