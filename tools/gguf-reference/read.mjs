// Prints a GGUF file's metadata and tensor infos as read by Hugging Face's
// @huggingface/gguf parser, as JSON:
//   {"metadata": {key: {"type": T, "value": V}}, "tensors": [{name, dims, type, offset}]}
// T is the GGUF value type id (arrays: {"type": 9, "subType": id}); 64-bit
// integers are written as decimal strings so that no precision is lost.
//   node read.mjs FILE
import { gguf } from "@huggingface/gguf";
import path from "node:path";

const file = path.resolve(process.argv[2]);
const { metadata, typedMetadata, tensorInfos } = await gguf(file, {
  allowLocalFile: true,
  typedMetadata: true,
});

const plain = (v) =>
  typeof v === "bigint" ? v.toString() : Array.isArray(v) ? v.map(plain) : v;

const out = { version: plain(metadata.version), metadata: {}, tensors: [] };
for (const [key, entry] of Object.entries(typedMetadata)) {
  if (key === "version" || key === "tensor_count" || key === "kv_count") continue;
  out.metadata[key] = { type: entry.type, subType: entry.subType, value: plain(entry.value) };
}
for (const t of tensorInfos)
  out.tensors.push({ name: t.name, dims: plain(t.shape), type: t.dtype, offset: plain(t.offset) });
process.stdout.write(JSON.stringify(out) + "\n");
