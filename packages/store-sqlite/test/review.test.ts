/** Human review across processes: interrupted in one process, approved by thread id in a fresh
 * one, continued in a third — with SqliteCheckpointer and PostgresCheckpointer. */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bundledFixture } from "../../engram/test/fixtures/node-bundle.js";
import { PG_URL, dropSchema, pgAvailable, testSchema } from "../../store-postgres/test/helpers.js";

let script: string;
beforeAll(async () => {
  script = await bundledFixture(join(import.meta.dirname, "fixtures/review.ts"));
});
const run = (kind: string, target: string, mode: string) =>
  JSON.parse(
    execFileSync(process.execPath, [script, kind, target, mode], { encoding: "utf8", env: process.env, timeout: 50_000 })
      .trim()
      .split("\n")
      .at(-1) as string,
  ) as Record<string, unknown>;

const dir = mkdtempSync(join(tmpdir(), "engram-review-"));
const pgUp = await pgAvailable();
const schema = testSchema("review");
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  if (pgUp) await dropSchema(schema);
});

const scenario = (kind: string, target: () => string) => () => {
  expect(run(kind, target(), "start")).toEqual({ interrupted: ["w1"], messages: 2 });
  expect(run(kind, target(), "resume")).toEqual({ answer: "final:      1\tstep 1", interrupted: false, messages: 6 });
  expect(run(kind, target(), "followup")).toEqual({ answer: "final:      1\tstep 1", messages: 10, first: "plan it" });
};

describe("review across processes", () => {
  it(
    "SqliteCheckpointer: interrupt, approve in a fresh process, continue in a third",
    scenario("sqlite", () => join(dir, "review.db")),
    60_000,
  );
  it.skipIf(!pgUp)(
    "PostgresCheckpointer: interrupt, approve in a fresh process, continue in a third",
    async () => {
      await dropSchema(schema);
      scenario("pg", () => `${PG_URL}#${schema}`)();
    },
    60_000,
  );
});
