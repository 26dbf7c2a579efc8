/**
 * Text cutting that never splits a character: the one helper every truncation in the
 * TypeScript layer uses (tool output caps, memory caps, previews, excerpts, error subjects).
 * @module
 */

/** @internal The first `max` UTF-16 units of `text`, one fewer when the cut would fall between
 * the two halves of a surrogate pair (an emoji, a rare CJK character): the result is always
 * well-formed when `text` is. */
export function cutAt(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = Math.max(0, Math.floor(max));
  const c = text.charCodeAt(end - 1);
  if (end > 0 && c >= 0xd800 && c <= 0xdbff) end--;
  return text.slice(0, end);
}
