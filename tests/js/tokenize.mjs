// Reference tokenization with @lenml/tokenizers (a JS port of transformers.js
// tokenizers), for comparison with FreeToken's C++ tokenizer.
//
// usage: node tokenize.mjs --node-modules DIR --tokenizer DIR --corpus FILE
//   DIR (tokenizer) holds tokenizer.json and tokenizer_config.json;
//   FILE is a JSON array of strings.
// Prints a JSON array with one {"ids": [...], "decoded": "..."} per string:
// ids from encode() (add_special_tokens left at its default), decoded from
// decode(ids) without clean_up_tokenization_spaces (FreeToken never applies
// that English-specific rewrite).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

function parseArgs(argv) {
  const args = {};
  for (let i = 0; i < argv.length; i += 2) {
    if (!argv[i].startsWith("--") || i + 1 >= argv.length) {
      throw new Error(`bad argument ${argv[i]}`);
    }
    args[argv[i].slice(2)] = argv[i + 1];
  }
  for (const key of ["node-modules", "tokenizer", "corpus"]) {
    if (!args[key]) throw new Error(`missing --${key}`);
  }
  return args;
}

const args = parseArgs(process.argv.slice(2));
const entry = join(args["node-modules"], "@lenml", "tokenizers", "dist", "main.mjs");
const { TokenizerLoader } = await import(pathToFileURL(entry).href);
const readJson = (path) => JSON.parse(readFileSync(path, "utf8"));

const tokenizer = TokenizerLoader.fromPreTrained({
  tokenizerJSON: readJson(join(args.tokenizer, "tokenizer.json")),
  tokenizerConfig: readJson(join(args.tokenizer, "tokenizer_config.json")),
});

const results = readJson(args.corpus).map((text) => {
  const ids = tokenizer.encode(text);
  const decoded =
    ids.length === 0 ? "" : tokenizer.decode(ids, { clean_up_tokenization_spaces: false });
  return { ids, decoded };
});
process.stdout.write(JSON.stringify(results));
