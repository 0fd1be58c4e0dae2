// kvactor-serve's /v1/chat/completions as OpenAI's official Node client
// (npm openai, tools/openai-client) drives it: tool calling and structured
// outputs, each answer checked against the request's JSON Schemas by the
// small validator below (not kvactor's grammar). serve_openai_client.sh runs
// it; Node finds "openai" through a node_modules beside this file.
//   node openai_client.mjs BASE_URL MODEL [--tools-only] [--format=json|hermes]
//                          [--label=TEXT] [--seeds=N]
// BASE_URL ends in /v1. --format names the model's tool call format (json:
// no chat template; hermes: Qwen2.5's), for a look at how the history of a
// round trip is rendered (kvactor's /tokenize and /detokenize, by fetch).
// Exits 1 at the first failure, naming it; prints one summary line on success.
import OpenAI from "openai";

const args = process.argv.slice(2);
const positional = args.filter((a) => !a.startsWith("--"));
const option = (name) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const [baseURL, model] = positional;
if (!baseURL || !model) {
  console.error("usage: node openai_client.mjs BASE_URL MODEL [--tools-only] [--label=TEXT] [--seeds=N]");
  process.exit(2);
}
const tools_only = args.includes("--tools-only");
const format = option("format") ?? "json";
const label = option("label") ?? model;
const seeds = Array.from({ length: Number(option("seeds") ?? 8) }, (_, i) => i + 1);

const client = new OpenAI({ baseURL, apiKey: "none", maxRetries: 0, timeout: 120_000 });

class check_failed extends Error {}
let context = ""; // what is being checked, for the failure message
const expect = (ok, what, detail) => {
  if (!ok)
    throw new check_failed(`${what}` + (detail === undefined ? "" : `\n  got: ${JSON.stringify(detail)}`));
};

// ---- A JSON Schema validator for the keywords these checks use ------------
// Lengths are in characters (code points), as JSON Schema counts them. A
// keyword it does not know is an error of the test, never passed over.
const known_keywords = new Set(["type", "enum", "const", "properties", "required",
  "additionalProperties", "items", "minItems", "maxItems", "minLength", "maxLength",
  "description", "title"]);

function deep_equal(a, b) {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a), kb = Object.keys(b);
  return ka.length === kb.length && ka.every((k) => Object.hasOwn(b, k) && deep_equal(a[k], b[k]));
}

function type_of(v) {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "number") return Number.isInteger(v) ? "integer" : "number";
  return typeof v; // string, boolean, object
}

// The errors of `value` against `schema` ([] when it is valid).
function validate(schema, value, path = "$") {
  if (schema === true) return [];
  if (schema === false) return [`${path}: no value is allowed`];
  for (const k of Object.keys(schema))
    if (!known_keywords.has(k)) throw new Error(`the test's validator does not know the keyword ${k}`);
  const errors = [];
  const t = type_of(value);
  if (schema.type !== undefined) {
    const types = [schema.type].flat();
    const ok = types.some((want) => want === t || (want === "number" && t === "integer"));
    if (!ok) return [`${path}: ${JSON.stringify(value)} is not of type ${types.join("|")}`];
  }
  if (schema.enum && !schema.enum.some((e) => deep_equal(e, value)))
    errors.push(`${path}: ${JSON.stringify(value)} is not one of ${JSON.stringify(schema.enum)}`);
  if ("const" in schema && !deep_equal(schema.const, value))
    errors.push(`${path}: ${JSON.stringify(value)} is not ${JSON.stringify(schema.const)}`);
  if (t === "string") {
    const n = [...value].length;
    if (schema.maxLength !== undefined && n > schema.maxLength)
      errors.push(`${path}: ${n} characters, more than maxLength ${schema.maxLength}`);
    if (schema.minLength !== undefined && n < schema.minLength)
      errors.push(`${path}: ${n} characters, fewer than minLength ${schema.minLength}`);
  }
  if (t === "array") {
    if (schema.maxItems !== undefined && value.length > schema.maxItems)
      errors.push(`${path}: ${value.length} items, more than maxItems ${schema.maxItems}`);
    if (schema.minItems !== undefined && value.length < schema.minItems)
      errors.push(`${path}: ${value.length} items, fewer than minItems ${schema.minItems}`);
    if (schema.items !== undefined)
      value.forEach((v, i) => errors.push(...validate(schema.items, v, `${path}[${i}]`)));
  }
  if (t === "object") {
    const properties = schema.properties ?? {};
    for (const r of schema.required ?? [])
      if (!Object.hasOwn(value, r)) errors.push(`${path}: the required property ${r} is missing`);
    for (const [k, v] of Object.entries(value)) {
      const where = `${path}.${k}`;
      if (Object.hasOwn(properties, k)) errors.push(...validate(properties[k], v, where));
      else if (schema.additionalProperties === false) errors.push(`${where}: not allowed (additionalProperties false)`);
      else if (schema.additionalProperties !== undefined)
        errors.push(...validate(schema.additionalProperties, v, where));
    }
  }
  return errors;
}

// The validator itself, on values it must accept and refuse.
{
  const s = { type: "object", properties: { a: { type: "string", maxLength: 2 }, b: { enum: ["x", 1] },
    c: { type: "integer" }, d: { type: "array", items: { type: "boolean" }, maxItems: 2 } },
  required: ["a"], additionalProperties: false };
  const good = [{ a: "" }, { a: "é😀", b: 1, c: -3, d: [true, false] }, { a: "ab", b: "x" }];
  const bad = [{}, { a: "abc" }, { a: "a", b: "y" }, { a: "a", c: 1.5 }, { a: "a", e: 1 },
    { a: "a", d: [1] }, { a: "a", d: [true, true, true] }, [], "x", null, { a: 1 }];
  for (const v of good) expect(validate(s, v).length === 0, "validator self-check: refused a valid value", v);
  for (const v of bad) expect(validate(s, v).length > 0, "validator self-check: accepted an invalid value", v);
}

// ---- What is asked ----------------------------------------------------------
const get_weather = {
  type: "function",
  function: {
    name: "get_weather",
    description: "The weather in a city",
    parameters: {
      type: "object",
      properties: { city: { type: "string", maxLength: 12 }, unit: { type: "string", enum: ["C", "F"] } },
      required: ["city", "unit"],
      additionalProperties: false,
    },
  },
};
const get_time = {
  type: "function",
  function: {
    name: "get_time",
    description: "The time in a time zone",
    parameters: { type: "object", properties: { zone: { type: "string", maxLength: 8 } } },
  },
};
const tools = [get_weather, get_time];
const schema_of = Object.fromEntries(tools.map((t) => [t.function.name, t.function.parameters]));
const messages = [
  { role: "system", content: "You answer with the tools you are given." },
  { role: "user", content: "What is the weather in Paris, and the time in Tokyo?" },
];
// Calls end when the model picks the end of its turn, which a model of
// random weights does late at times: room for a few dozen calls.
const base = { model, messages, temperature: 1, max_tokens: 1024 };

// A request of tool_choice required (or a named function) whose answer ran
// out of max_tokens is sent again with the next seed (1000 on); at most a
// quarter of the requests may.
let ran_out = 0;
async function create_calls(body) {
  for (let seed = body.seed; ; seed += 1000) {
    const r = await client.chat.completions.create({ ...body, seed });
    if (r.choices[0]?.finish_reason !== "length") return [r, seed];
    ran_out++;
    expect(ran_out <= seeds.length, "at most a quarter of the calls run out of max_tokens", r.choices[0]);
  }
}

// A response's calls: each has an id, type function, a name among the tools
// (or `only`) and arguments that are JSON valid against that tool's schema.
function check_calls(calls, only) {
  expect(Array.isArray(calls) && calls.length > 0, "tool_calls is a non-empty array", calls);
  const ids = new Set();
  for (const call of calls) {
    expect(typeof call.id === "string" && call.id.startsWith("call_"), "a call's id begins with call_", call);
    expect(!ids.has(call.id), "the calls' ids differ", calls);
    ids.add(call.id);
    expect(call.type === "function", "a call's type is function", call);
    const name = call.function?.name;
    expect(only ? name === only : Object.hasOwn(schema_of, name),
      only ? `the call names ${only}` : "the call names one of the tools", call);
    expect(typeof call.function.arguments === "string", "a call's arguments are a string", call);
    let args;
    try {
      args = JSON.parse(call.function.arguments);
    } catch (e) {
      expect(false, `a call's arguments parse as JSON (${e.message})`, call);
    }
    const errors = validate(schema_of[name], args);
    expect(errors.length === 0, `${name}'s arguments match its schema: ${errors.join("; ")}`, call);
  }
}

const counts = { required: 0, calls: 0, parallel: 0, single: 0, named: 0, streamed: 0, same: 0,
  sdk_stream: 0, round_trip: 0, rendered: 0, auto: 0, none: 0, json_schema: 0,
  json_schema_length: 0, json_object: 0, errors: 0 };
const keep = {}; // answers reused by later checks, by seed

async function tool_calls_required() {
  for (const seed of seeds) {
    context = `tool_choice required, seed ${seed}`;
    const [r, used] = await create_calls({ ...base, seed, tools, tool_choice: "required" });
    context = `tool_choice required, seed ${used}`;
    const c = r.choices[0];
    expect(r.object === "chat.completion" && r.choices.length === 1, "one chat.completion choice", r);
    expect(c.finish_reason === "tool_calls", "finish_reason is tool_calls", c);
    expect(c.message.role === "assistant", "the message's role is assistant", c.message);
    expect(c.message.content === null, "content is null", c.message);
    check_calls(c.message.tool_calls);
    expect(r.usage && r.usage.completion_tokens > 0, "usage counts the completion tokens", r.usage);
    keep[used] = c.message.tool_calls;
    counts.required++;
    counts.calls += c.message.tool_calls.length;
    if (c.message.tool_calls.length > 1) counts.parallel++;
  }
}

async function tool_calls_single() {
  for (const seed of seeds) {
    context = `tool_choice required, parallel_tool_calls false, seed ${seed}`;
    const r = await client.chat.completions.create({ ...base, seed, tools, tool_choice: "required",
      parallel_tool_calls: false });
    const c = r.choices[0];
    expect(c.finish_reason === "tool_calls", "finish_reason is tool_calls", c);
    check_calls(c.message.tool_calls);
    expect(c.message.tool_calls.length === 1, "exactly one call", c.message.tool_calls);
    counts.single++;
  }
}

async function tool_calls_named() {
  for (const seed of seeds) {
    const name = seed % 2 ? "get_weather" : "get_time";
    context = `tool_choice naming ${name}, seed ${seed}`;
    const r = await client.chat.completions.create({ ...base, seed, tools,
      tool_choice: { type: "function", function: { name } } });
    const c = r.choices[0];
    // NOTE: OpenAI ends a call forced by a named tool_choice with "stop".
    expect(c.finish_reason === "stop", "finish_reason is stop", c);
    expect(c.message.content === null, "content is null", c.message);
    check_calls(c.message.tool_calls, name);
    expect(c.message.tool_calls.length === 1, "exactly one call", c.message.tool_calls);
    counts.named++;
  }
}

async function tool_calls_streamed() {
  for (const seed of Object.keys(keep).map(Number)) {
    context = `streamed tool_choice required, seed ${seed}`;
    const stream = await client.chat.completions.create({ ...base, seed, tools, tool_choice: "required",
      stream: true, stream_options: { include_usage: true } });
    // Per index: the first fragment brings id, type and name; every
    // fragment's arguments are concatenated (OpenAI's function calling guide).
    const calls = [];
    // The guide's snippet as it is printed: it keeps the first fragment
    // itself, then appends every fragment's arguments, the first's included
    // (it expects "" there, as OpenAI's API sends).
    const docs = {};
    const pieces = []; // per call: its fragments with arguments
    let finish = null, content = "", usage = null, after_finish = false;
    for await (const chunk of stream) {
      expect(chunk.object === "chat.completion.chunk", "a chunk is a chat.completion.chunk", chunk);
      if (chunk.usage) usage = chunk.usage;
      for (const choice of chunk.choices) {
        expect(choice.index === 0, "one choice", chunk);
        expect(!after_finish, "nothing comes after the chunk with finish_reason", chunk);
        const d = choice.delta ?? {};
        if (typeof d.content === "string") content += d.content;
        for (const f of d.tool_calls ?? []) {
          expect(Number.isInteger(f.index) && f.index >= 0, "a fragment has an index", f);
          if (!calls[f.index]) {
            expect(f.index === calls.length, "the calls' indexes come in order", chunk);
            expect(f.id && f.type === "function" && f.function?.name, "a call's first fragment has id, type and name", f);
            calls[f.index] = { id: f.id, type: f.type, function: { name: f.function.name, arguments: "" } };
          } else {
            expect(!f.id || f.id === calls[f.index].id, "a call's later fragments keep its id", f);
          }
          calls[f.index].function.arguments += f.function?.arguments ?? "";
          if (f.function?.arguments) pieces[f.index] = (pieces[f.index] ?? 0) + 1;
          const copy = structuredClone(f);
          if (!docs[copy.index]) docs[copy.index] = copy;
          docs[copy.index].function.arguments += copy.function?.arguments ?? "";
        }
        if (choice.finish_reason) {
          finish = choice.finish_reason;
          after_finish = true;
        }
      }
    }
    expect(finish === "tool_calls", "the last finish_reason is tool_calls", finish);
    expect(content === "", "no content besides the calls", content);
    expect(usage && usage.completion_tokens > 0, "include_usage gives the usage", usage);
    check_calls(calls);
    // A forced call streams as it is written: arguments longer than a
    // token or two come in several fragments.
    calls.forEach((c, k) => expect(c.function.arguments.length <= 8 || pieces[k] > 1,
      "a call's arguments stream piece by piece", { arguments: c.function.arguments, fragments: pieces[k] }));
    // The same seed unstreamed gave the same calls (ids aside).
    const strip = (cs) => cs.map((c) => [c.function.name, c.function.arguments]);
    expect(deep_equal(strip(calls), strip(keep[seed])), "the stream gives the calls of the same request unstreamed",
      { streamed: strip(calls), unstreamed: strip(keep[seed]) });
    counts.same++;
    expect(deep_equal(strip(Object.values(docs)), strip(calls)),
      "OpenAI's guide's stream snippet (the first fragment kept, every fragment's arguments appended) " +
      "gives the calls: a call's first fragment carries arguments \"\"", { docs, calls });
    counts.streamed++;
  }
}

// The SDK's own accumulation of a stream (chat.completions.stream) gives the
// calls of the same request unstreamed.
async function tool_calls_sdk_stream() {
  for (const seed of Object.keys(keep).map(Number).slice(0, 3)) {
    context = `client.chat.completions.stream, tool_choice required, seed ${seed}`;
    const stream = client.chat.completions.stream({ ...base, seed, tools, tool_choice: "required" });
    const final = await stream.finalChatCompletion();
    const c = final.choices[0];
    expect(c.finish_reason === "tool_calls", "finish_reason is tool_calls", c);
    check_calls(c.message.tool_calls);
    const strip = (cs) => cs.map((x) => [x.function.name, x.function.arguments]);
    expect(deep_equal(strip(c.message.tool_calls), strip(keep[seed])),
      "the SDK's accumulated stream gives the calls of the same request unstreamed",
      { streamed: strip(c.message.tool_calls), unstreamed: strip(keep[seed]) });
    counts.sdk_stream++;
  }
}

// The prompt a round trip's history renders to: the tool results in it, and
// with the hermes format each call as Qwen2.5's template writes it:
// <tool_call>\n{"name": ..., "arguments": {...}}\n</tool_call>, the
// arguments the objects the call's JSON strings hold.
async function check_rendered(history, calls) {
  const post = async (route, body) => {
    const r = await fetch(new URL(baseURL).origin + route, { method: "POST", body: JSON.stringify(body) });
    const json = await r.json();
    expect(r.status === 200, `${route} answers 200`, json);
    return json;
  };
  const { tokens } = await post("/tokenize", { model, messages: history, tools });
  const { prompt } = await post("/detokenize", { model, tokens });
  for (const m of history.filter((m) => m.role === "tool"))
    expect(prompt.includes(m.content), "the rendered prompt holds each tool result", prompt);
  if (format !== "hermes") return;
  expect(prompt.includes("<tools>") && tools.every((t) => prompt.includes(JSON.stringify(t.function.name))),
    "the rendered prompt lists the tools", prompt);
  const written = [];
  for (const [, text] of prompt.matchAll(/<tool_call>\n(.*?)\n<\/tool_call>/gs)) {
    try {
      written.push(JSON.parse(text));
    } catch {} // the template's own example, {"name": <function-name>, ...}
  }
  const sent = calls.map((c) => ({ name: c.function.name, arguments: JSON.parse(c.function.arguments) }));
  expect(deep_equal(written, sent), "the rendered prompt writes the calls as the hermes format does",
    { written, sent, prompt });
  expect((prompt.match(/<tool_response>\n/g) ?? []).length === calls.length,
    "one <tool_response> per tool message", prompt);
  counts.rendered++;
}

async function round_trip() {
  for (const seed of Object.keys(keep).map(Number).slice(0, 4)) {
    context = `a round trip: seed ${seed}'s calls and their results sent back`;
    const calls = keep[seed];
    const history = [
      ...messages,
      { role: "assistant", content: null, tool_calls: calls },
      ...calls.map((c) => ({ role: "tool", tool_call_id: c.id,
        content: JSON.stringify(c.function.name === "get_weather" ? { temperature: 21, sky: "clear" } : { time: "09:30" }) })),
    ];
    await check_rendered(history, calls);
    const r = await client.chat.completions.create({ ...base, messages: history, seed, tools, max_tokens: 16 });
    const c = r.choices[0];
    expect(["stop", "length", "tool_calls"].includes(c.finish_reason), "finish_reason is stop, length or tool_calls", c);
    if (c.finish_reason === "tool_calls") check_calls(c.message.tool_calls);
    else expect(typeof c.message.content === "string", "content is a string", c.message);
    expect(r.usage.prompt_tokens > 0, "the prompt is counted", r.usage);
    // The next turn after that: a user message again, then required.
    context = `a round trip then a user message and tool_choice required: seed ${seed}`;
    const [r2] = await create_calls({ ...base, seed, tools, tool_choice: "required",
      messages: [...history, { role: "assistant", content: "Done." }, { role: "user", content: "And in Oslo?" }] });
    expect(r2.choices[0].finish_reason === "tool_calls", "finish_reason is tool_calls", r2.choices[0]);
    check_calls(r2.choices[0].message.tool_calls);
    counts.round_trip++;
  }
}

async function auto_and_none() {
  for (const seed of seeds.slice(0, 4)) {
    for (const tool_choice of [undefined, "auto", "none"]) {
      context = `tool_choice ${tool_choice ?? "left out"}, seed ${seed}`;
      const r = await client.chat.completions.create({ ...base, seed, tools, max_tokens: 24,
        ...(tool_choice ? { tool_choice } : {}) });
      const c = r.choices[0];
      if (c.finish_reason === "tool_calls") {
        expect(tool_choice !== "none", "no calls with tool_choice none", c);
        check_calls(c.message.tool_calls);
      } else if (c.finish_reason === "length" && c.message.tool_calls?.length) {
        // A call begun and cut short comes as far as it went.
        expect(tool_choice !== "none", "no calls with tool_choice none", c);
        expect(c.message.content === null, "no content beside the calls", c.message);
      } else {
        expect(["stop", "length"].includes(c.finish_reason), "finish_reason is stop or length", c);
        expect(typeof c.message.content === "string", "content is a string", c.message);
        expect(!c.message.tool_calls?.length, "no tool_calls with finish_reason " + c.finish_reason, c.message);
      }
      counts[tool_choice === "none" ? "none" : "auto"]++;
    }
  }
}

async function structured_outputs() {
  const schema = {
    type: "object",
    properties: {
      name: { type: "string", maxLength: 10 },
      mood: { enum: ["happy", "sad", "calm"] },
      age: { type: "integer" },
      ok: { type: "boolean" },
      tags: { type: "array", items: { type: "string", maxLength: 5 }, maxItems: 2 },
    },
    required: ["name", "mood", "age", "ok", "tags"],
    additionalProperties: false,
  };
  // A seed whose answer runs out of max_tokens (an integer's digits may go
  // on) takes the next one; most must end.
  let seed = 100;
  for (let i = 0; i < seeds.length; i++) {
    for (;;) {
      seed++;
      context = `response_format json_schema, seed ${seed}`;
      const r = await client.chat.completions.create({ ...base, seed, max_tokens: 96,
        response_format: { type: "json_schema", json_schema: { name: "person", schema } } });
      const c = r.choices[0];
      expect(typeof c.message.content === "string", "content is a string", c.message);
      if (c.finish_reason === "length") {
        counts.json_schema_length++;
        expect(counts.json_schema_length <= seeds.length / 2, "at most half the answers run out of max_tokens",
          counts.json_schema_length);
        continue;
      }
      expect(c.finish_reason === "stop", "finish_reason is stop", c);
      let value;
      try {
        value = JSON.parse(c.message.content);
      } catch (e) {
        expect(false, `content parses as JSON (${e.message})`, c.message.content);
      }
      const errors = validate(schema, value);
      expect(errors.length === 0, `content matches the schema: ${errors.join("; ")}`, c.message.content);
      counts.json_schema++;
      break;
    }
  }
  for (const seed of seeds.slice(0, 4)) {
    context = `response_format json_object, seed ${seed}`;
    const r = await client.chat.completions.create({ ...base, seed, max_tokens: 256,
      response_format: { type: "json_object" } });
    const c = r.choices[0];
    expect(typeof c.message.content === "string", "content is a string", c.message);
    if (c.finish_reason === "length") continue; // an object may run past max_tokens
    expect(c.finish_reason === "stop", "finish_reason is stop or length", c);
    let value;
    try {
      value = JSON.parse(c.message.content);
    } catch (e) {
      expect(false, `content parses as JSON (${e.message})`, c.message.content);
    }
    expect(type_of(value) === "object", "content is a JSON object", c.message.content);
    counts.json_object++;
  }
  context = "response_format json_object";
  expect(counts.json_object > 0, "at least one json_object answer ends within max_tokens", counts.json_object);
}

async function refusals() {
  const cases = [
    ["tool_choice naming a function not in tools", { tools, tool_choice: { type: "function", function: { name: "get_stock" } } }, "tool_choice"],
    ["tools that are not functions", { tools: [{ type: "retrieval" }] }, "tools"],
  ];
  for (const [what, body, param] of cases) {
    context = what;
    let error = null;
    try {
      await client.chat.completions.create({ ...base, ...body });
    } catch (e) {
      error = e;
    }
    expect(error instanceof OpenAI.APIError, "the client throws an APIError", error && String(error));
    expect(error.status === 400, "status 400", error.status);
    expect(error instanceof OpenAI.BadRequestError, "a BadRequestError", error.constructor.name);
    expect(error.param === param, `error.param is ${param}`, { param: error.param, message: error.message });
    counts.errors++;
  }
}

try {
  await tool_calls_required();
  await tool_calls_single();
  await tool_calls_named();
  await tool_calls_streamed();
  await tool_calls_sdk_stream();
  await round_trip();
  await refusals();
  if (!tools_only) {
    await auto_and_none();
    await structured_outputs();
  }
} catch (e) {
  const why = e instanceof check_failed ? e.message : e instanceof OpenAI.APIError
    ? `the server answered ${e.status}: ${JSON.stringify(e.error)}` : (e.stack ?? String(e));
  console.error(`openai_client [${label}] FAILED: ${context}: ${why}`);
  process.exit(1);
}

const c = counts;
console.log(`openai_client [${label}] ok: required ${c.required} (${c.calls} calls, ${c.parallel} parallel), ` +
  `ran out of tokens ${ran_out}, single ${c.single}, named ${c.named}, streamed ${c.streamed} (same as unstreamed ${c.same}, ` +
  `sdk stream ${c.sdk_stream}), round trips ${c.round_trip} (rendered ${c.rendered}), refusals ${c.errors}` +
  (tools_only ? "" : `, auto ${c.auto}, none ${c.none}, json_schema ${c.json_schema} ` +
    `(${c.json_schema_length} ran out of tokens), json_object ${c.json_object}`));
