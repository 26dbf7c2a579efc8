/** An agent turn through the OpenAI-compatible model against a real chat-completions server. */
import { afterAll, beforeAll, expect, it } from "vitest";
import { type AgentOutput, type Core, DEFAULT_SYSTEM_PROMPT, OpenAICompatibleModel, createDeepAgent, loadCore } from "../src/index.js";
import { type ChatServer, chunk, sse, startChatServer } from "./fixtures/models/chat-server.js";

let core: Core;
let server: ChatServer;
beforeAll(async () => {
  core = await loadCore();
  server = await startChatServer();
});
afterAll(() => server.close());

it("streams text, runs a tool call split across chunks, and sends the result back", async () => {
  server.reply(
    sse([
      chunk({ role: "assistant", content: "Saving " }),
      chunk({ content: "it." }),
      chunk({ tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "write_file", arguments: '{"file_pa' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: 'th": "/n.md", "content": "hi"}' } }] }, "tool_calls"),
    ]),
    sse([chunk({ role: "assistant", content: "Done: " }), chunk({ content: "saved /n.md." }, "stop")]),
  );
  const agent = createDeepAgent(new OpenAICompatibleModel({ baseURL: server.baseURL, model: "local-llm" }), {
    core,
    enableSubagents: false,
  });
  const deltas: string[] = [];
  let final: AgentOutput | undefined;
  for await (const ev of agent.stream({ messages: [{ role: "user", content: "save hi to /n.md" }] }, { threadId: "oa" })) {
    if (ev.type === "model_delta") deltas.push(ev.text);
    if (ev.type === "final") final = ev.output;
  }
  expect(deltas.join("")).toBe("Saving it.Done: saved /n.md.");
  expect(final?.messages.at(-1)).toEqual({ role: "assistant", content: "Done: saved /n.md." });
  // The second request carries the assistant's tool call and our tool result, in wire format.
  const second = server.requests[1]?.body;
  expect(second.model).toBe("local-llm");
  expect(second.stream).toBe(true);
  // Cache-friendly layout: the static prompt first, the same on both calls; memory and skills
  // in a second system message after it.
  expect(second.messages[0]).toEqual({ role: "system", content: DEFAULT_SYSTEM_PROMPT });
  expect(server.requests[0]?.body.messages[0]).toEqual(second.messages[0]);
  expect(second.messages[1].role).toBe("system");
  expect(second.messages[1].content).toMatch(/^<agent_memory>/);
  const assistant = second.messages.find((m: { role: string }) => m.role === "assistant");
  expect(assistant.tool_calls[0]).toMatchObject({ id: "call_1", function: { name: "write_file" } });
  expect(JSON.parse(assistant.tool_calls[0].function.arguments)).toEqual({ file_path: "/n.md", content: "hi" });
  expect(second.messages.at(-1)).toEqual({ role: "tool", tool_call_id: "call_1", content: "Wrote /n.md" });
  expect(second.tools.map((t: { function: { name: string } }) => t.function.name)).toContain("write_file");
});
