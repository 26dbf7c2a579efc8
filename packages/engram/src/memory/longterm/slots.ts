/**
 * Facts that can hold one value at a time — the user's name, where they live, their job, their
 * employer, a favourite thing, how many of something they have, their age — recognised from the
 * wording the extraction asks for ("Is called Sam", "Lives in Porto", "Works as a nurse"). A new
 * fact in the same slot as an older one replaces it, and when two such facts are both stored the
 * newer one is injected. Facts outside these slots are replaced only when the model names the
 * fact it updates (see `supersede.ts`).
 * @module
 */
import type { Fact } from "./schema.js";
import { stem } from "./words.js";

const NUMBER = "\\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve";

/** Slot patterns, tried in order on a fact without its leading subject and time words. */
const SLOTS: readonly [slot: string | ((m: RegExpExecArray) => string), pattern: RegExp][] = [
  [
    "name",
    /^(?:is (?:called|named)|goes by|(?:(?:his|her|their) )?(?:full |first |last |sur)?name is|(?:has )?changed (?:(?:his|her|their) )?name to)\b/iu,
  ],
  ["location", /^(?:lives|is living|resides|is based|has moved|moved|relocated|has relocated)\b[^.;]*?\b(?:in|to)\b/iu],
  ["job", /^(?:(?:works|is working|is employed) as|(?:(?:his|her|their) )?(?:job|role|occupation|profession|position) is)\b/iu],
  ["employer", /^(?:works|is working|is employed) (?:at|for)\b/iu],
  ["age", new RegExp(`^is (?:${NUMBER}) years? old\\b`, "iu")],
  [(m) => `favourite:${stem((m[1] ?? "").toLowerCase())}`, /^(?:(?:his|her|their) )?favou?rite ([\p{L}]+(?: [\p{L}]+)?) is\b/iu],
  [(m) => `count:${stem((m[1] ?? "").toLowerCase())}`, new RegExp(`^has (?:${NUMBER}) ([\\p{L}]+)`, "iu")],
];

/** Leading words that do not change what a fact is about: a subject, "now", "currently", a
 * label before a colon ("Switched editors: the user's favourite editor is now Zed"). */
const LEAD = /^(?:(?:the )?user(?:'s)?|he|she|they)\s+|^(?:now|currently|recently|still)\s+|^(?:now|currently),?\s+|^[\p{L} ]{1,40}:\s+/iu;

/** The slot a fact fills (`"name"`, `"location"`, `"job"`, `"employer"`, `"age"`,
 * `"favourite:<thing>"`, `"count:<thing>"`), or `undefined` for a fact that may hold many values. */
export function slotOf(content: string): string | undefined {
  let text = content.trim();
  for (let i = 0; i < 3; i++) {
    const next = text.replace(LEAD, "");
    if (next === text) break;
    text = next;
  }
  // "His name is now Jo Okafor": "now" inside the relation.
  text = text.replace(/\b(?:is|are) now\b/iu, (m) => m.replace(/\s+now\b/iu, ""));
  for (const [slot, pattern] of SLOTS) {
    const m = pattern.exec(text);
    if (m) return typeof slot === "string" ? slot : slot(m);
  }
  return undefined;
}

/** When a fact was last stated or confirmed (ISO-8601). */
export function lastConfirmed(fact: Pick<Fact, "createdAt" | "confirmedAt">): string {
  return fact.confirmedAt && fact.confirmedAt > fact.createdAt ? fact.confirmedAt : fact.createdAt;
}

/** Slots found so far, by fact text (`slotOf` depends on the text alone): `newestPerSlot` runs
 * over every stored fact on each injection that is not cached. Emptied when it grows large. */
const slotByText = new Map<string, string | undefined>();
const SLOT_CACHE_LIMIT = 20_000;

function cachedSlotOf(content: string): string | undefined {
  if (slotByText.has(content)) return slotByText.get(content);
  if (slotByText.size >= SLOT_CACHE_LIMIT) slotByText.clear();
  const slot = slotOf(content);
  slotByText.set(content, slot);
  return slot;
}

/**
 * `facts` less every fact whose slot (see {@link slotOf}) a more recently confirmed fact also
 * fills — the newest wins a conflict; on equal times the later in the list wins. Order kept.
 */
export function newestPerSlot<T extends Pick<Fact, "content" | "createdAt" | "confirmedAt">>(facts: readonly T[]): T[] {
  const slots = facts.map((f) => cachedSlotOf(f.content));
  const winner = new Map<string, number>();
  slots.forEach((slot, i) => {
    if (slot === undefined) return;
    const best = winner.get(slot);
    if (best === undefined || lastConfirmed(facts[i] as T) >= lastConfirmed(facts[best] as T)) winner.set(slot, i);
  });
  return facts.filter((_, i) => {
    const slot = slots[i];
    return slot === undefined || winner.get(slot) === i;
  });
}
