// ft-serve on a GPU, driven by the official `openai` npm client: a chat
// completion, the same request streamed (same seed, so the same text), and N
// concurrent requests that must all finish. Prints one line per check and
// exits 1 if any fails.
//
// Usage: node openai_check.mjs BASE_URL [CONCURRENT]
// tests/gpu/run_e2e.sh bundles it with the client (esbuild) so that only node
// and one file travel to the GPU machine.
import OpenAI from "openai";

const base = process.argv[2];
const concurrent = Number(process.argv[3] ?? 32);
if (!base) {
  console.error("usage: node openai_check.mjs BASE_URL [CONCURRENT]");
  process.exit(2);
}
const client = new OpenAI({ baseURL: `${base}/v1`, apiKey: "none" });
let failed = 0;
const check = (name, ok, detail) => {
  console.log(`${ok ? "ok  " : "FAIL"} ${name}: ${detail}`);
  if (!ok) failed++;
};

const models = await client.models.list();
const model = models.data[0].id;
const request = {
  model,
  messages: [{ role: "user", content: "Write a short poem about graphics cards." }],
  max_tokens: 48,
  temperature: 0.8,
  seed: 1234,
};

let t0 = performance.now();
const chat = await client.chat.completions.create(request);
const text = chat.choices[0].message.content ?? "";
check("chat", chat.usage.completion_tokens > 0 && chat.choices[0].finish_reason !== null,
      `${chat.usage.completion_tokens} tokens, finish ${chat.choices[0].finish_reason}, ` +
      `${(performance.now() - t0).toFixed(0)} ms`);

t0 = performance.now();
const stream = await client.chat.completions.create({ ...request, stream: true, stream_options: { include_usage: true } });
let streamed = "", chunks = 0, firstMs = 0, finish = null;
for await (const chunk of stream) {
  if (!firstMs) firstMs = performance.now() - t0;
  const choice = chunk.choices[0];
  if (choice?.delta?.content) streamed += choice.delta.content;
  if (choice?.finish_reason) finish = choice.finish_reason;
  chunks++;
}
check("stream", streamed === text && finish !== null,
      `${chunks} chunks, first after ${firstMs.toFixed(0)} ms, ${streamed === text ? "same text as the non-streamed reply" : "text differs"}`);

t0 = performance.now();
const replies = await Promise.all(
  Array.from({ length: concurrent }, (_, i) =>
    client.chat.completions.create({ ...request, seed: i, max_tokens: 64,
                                     messages: [{ role: "user", content: `Count to ${i + 3}.` }] })));
const ms = performance.now() - t0;
const tokens = replies.reduce((n, r) => n + r.usage.completion_tokens, 0);
const done = replies.filter((r) => r.choices[0].finish_reason === "length" || r.choices[0].finish_reason === "stop");
check(`${concurrent} concurrent`, done.length === concurrent,
      `${done.length} finished, ${tokens} tokens in ${ms.toFixed(0)} ms (${(tokens / ms * 1000).toFixed(0)} tok/s with prefill)`);

process.exit(failed ? 1 : 0);
