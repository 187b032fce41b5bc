// Renders chat-template cases with @huggingface/jinja, the independent Jinja
// implementation FreeToken's chat templates are compared against.
//
// usage: node render_template.mjs INPUT.json JS_DIR
//   INPUT.json: {template, cases: [{messages, tools, add_generation_prompt,
//                enable_thinking, bos_token, eos_token, extra}]}
//   JS_DIR: the folder whose node_modules holds @huggingface/jinja (<build>/js)
// Prints a JSON array with one {text} or {error} per case, in order.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";

const [input, jsDir] = process.argv.slice(2);
if (!input || !jsDir) {
  console.error("usage: node render_template.mjs INPUT.json JS_DIR");
  process.exit(2);
}
// The package lives in the build tree, not beside this script, so resolve it from there.
const require = createRequire(join(jsDir, "resolver.cjs"));
const { Template } = require("@huggingface/jinja");

const { template, cases } = JSON.parse(readFileSync(input, "utf8"));

// The same variables FreeToken's ChatTemplate passes: keys that are absent stay undefined.
function variables(c) {
  const vars = {
    messages: c.messages,
    tools: c.tools ?? null,
    add_generation_prompt: c.add_generation_prompt ?? true,
  };
  for (const key of ["bos_token", "eos_token", "enable_thinking"]) {
    if (c[key] !== undefined) vars[key] = c[key];
  }
  return { ...vars, ...(c.extra ?? {}) };
}

let compiled = null;
let compileError = null;
try {
  compiled = new Template(template);
} catch (e) {
  compileError = String(e?.message ?? e);
}

const results = cases.map((c) => {
  if (compileError) return { error: compileError };
  try {
    return { text: compiled.render(variables(c)) };
  } catch (e) {
    return { error: String(e?.message ?? e) };
  }
});
process.stdout.write(JSON.stringify(results));
