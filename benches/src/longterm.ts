/** Long-term memory injection: choosing what fits a 2,000-token budget out of 1,000 facts. */
import { type Core, FakeChatModel, InMemoryStore, LongTermMemory, StoreMemoryStorage } from "engram";
import { createEmptyMemory } from "engram/kit";

const TOPICS = ["deploys", "billing", "tests", "Rust", "TypeScript", "Postgres", "the CLI", "on-call", "reviews", "releases"];

/** A memory with 1,000 facts, and an inject call ranking them by `recall` for each of `requests`
 * in turn (one request: every model call of one run; two: a new request each call). */
export async function injection(
  core: Core,
  recall: "confidence" | "relevance",
  requests: readonly string[],
): Promise<() => Promise<boolean>> {
  const store = new InMemoryStore();
  const storage = new StoreMemoryStorage({ store });
  const memory = createEmptyMemory();
  memory.facts = Array.from({ length: 1000 }, (_, i) => ({
    id: `fact-${i}`,
    content: `The user ${i % 7 === 0 ? "prefers" : "mentioned"} ${TOPICS[i % TOPICS.length]} detail number ${i}; 用户备注 ${i}`,
    category: i % 50 === 0 ? "correction" : "context",
    confidence: 0.7 + ((i * 37) % 30) / 100,
    createdAt: new Date(1_700_000_000_000 + i * 1000).toISOString(),
    source: "bench",
  }));
  const loaded = await storage.load("bench-user", undefined);
  const saved = await storage.save("bench-user", undefined, memory, loaded.revision);
  if (!saved.ok) throw new Error("could not seed the memory");
  const ltm = new LongTermMemory({ model: new FakeChatModel([]), storage, core, recall, maxFacts: 1000 });
  let turn = 0;
  // Each block the memory gives is checked once: a block reused for the same request is the
  // same string, and checking it again would time the check rather than the injection.
  const verdicts = new Map<string, boolean>();
  return async () => {
    const block = await ltm.inject("bench-user", undefined, requests[turn++ % requests.length]);
    let verdict = verdicts.get(block);
    if (verdict === undefined) {
      verdict = correctBlock(block, recall);
      if (verdicts.size > 8) verdicts.clear();
      verdicts.set(block, verdict);
    }
    return verdict;
  };
}

/** Corrections come first; relevance must also surface facts about the request. */
function correctBlock(block: string, recall: "confidence" | "relevance"): boolean {
  const kinds = block
    .split("\n")
    .filter((line) => line.startsWith("- ["))
    .map((line) => line.startsWith("- [correction"));
  const correctionsFirst = kinds[0] === true && kinds.indexOf(false) > 0 && !kinds.slice(kinds.indexOf(false)).includes(true);
  return block.includes("<memory>") && correctionsFirst && (recall === "confidence" || block.includes("Postgres"));
}
