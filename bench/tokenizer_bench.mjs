// The JS peer of bench/text_bench.cpp: @lenml/tokenizers encoding the same
// text, timed inside node after one warm-up pass.
// usage: node tokenizer_bench.mjs NODE_MODULES TOKENIZER_DIR TEXT_FILE
// Prints one line: {"mb_per_s": X, "tokens": N}
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [nodeModules, tokDir, textFile] = process.argv.slice(2);
const { TokenizerLoader } = await import(
  pathToFileURL(join(nodeModules, "@lenml", "tokenizers", "dist", "main.mjs")).href);
const readJson = (p) => JSON.parse(readFileSync(p, "utf8"));
const tokenizer = TokenizerLoader.fromPreTrained({
  tokenizerJSON: readJson(join(tokDir, "tokenizer.json")),
  tokenizerConfig: readJson(join(tokDir, "tokenizer_config.json")),
});
const lines = readFileSync(textFile, "utf8").split("\n\n");
const bytes = Buffer.byteLength(readFileSync(textFile, "utf8"));
const run = () => lines.reduce((n, l) => n + tokenizer.encode(l).length, 0);
run();
const t0 = process.hrtime.bigint();
const tokens = run();
const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
process.stdout.write(JSON.stringify({ mb_per_s: bytes / 1e6 / seconds, tokens }) + "\n");
