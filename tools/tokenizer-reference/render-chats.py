#!/usr/bin/python3
# Renders every conversation of conversations.json with each family's published chat template
# (DIR/<family>/tokenizer_config.json, from fetch.sh), as Hugging Face's apply_chat_template
# renders it: Debian's Jinja2 (python3-jinja2) in a sandbox with trim_blocks and lstrip_blocks,
# loop controls, a tojson that writes plain JSON, raise_exception, strftime_now, the special
# tokens and the conversation's kwargs. Prints {family: {...}} as JSON; make-chat-reference.sh
# turns that into kvactor's expected files.
#   /usr/bin/python3 render-chats.py DIR
import hashlib
import json
import os
import sys
from datetime import datetime

import jinja2
from jinja2.ext import loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment

# strftime_now's clock: 2027-01-15 12:00 UTC, the same date in every zone within 11 hours of UTC.
NOW = 1800014400
FAMILIES = ["llama3", "llama3_1", "llama3_2", "qwen2_5", "qwen3", "mistral_nemo", "deepseek_v3"]


def environment():
    def tojson(value, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                          sort_keys=sort_keys)

    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = lambda fmt: datetime.fromtimestamp(NOW).strftime(fmt)
    return env


def template_and_tokens(config):
    text = config["chat_template"]
    if isinstance(text, list):
        text = next(t["template"] for t in text if t["name"] == "default")
    tokens = {}
    for key in ("bos_token", "eos_token", "unk_token", "pad_token"):
        value = config.get(key)
        if isinstance(value, dict):
            value = value["content"]
        if value is not None:
            tokens[key] = value
    return text, tokens


def main(directory):
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "conversations.json"), encoding="utf-8") as f:
        conversations = json.load(f)
    env = environment()
    out = {}
    for family in FAMILIES:
        path = os.path.join(directory, family, "tokenizer_config.json")
        with open(path, "rb") as f:
            raw = f.read()
        text, tokens = template_and_tokens(json.loads(raw))
        template = env.from_string(text)
        cases = []
        for index, c in enumerate(conversations):
            variables = dict(c.get("kwargs", {}))
            variables.update(tokens)
            variables["messages"] = c["messages"]
            variables["add_generation_prompt"] = c.get("add_generation_prompt", True)
            try:
                cases.append({"conversation": index, "text": template.render(**variables)})
            except jinja2.exceptions.TemplateError as error:
                cases.append({"conversation": index, "error": str(error)})
        out[family] = {"config_sha256": hashlib.sha256(raw).hexdigest(),
                       "jinja2": jinja2.__version__, "now": NOW, "cases": cases}
    json.dump(out, sys.stdout, ensure_ascii=False)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: render-chats.py DIR")
    main(sys.argv[1])
