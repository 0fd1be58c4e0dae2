# The Jinja2 environment in which kvactor renders chat templates. It runs in
# the CPython that kvactor embeds (model/chat/jinja_template.cpp compiles this
# file into the library) with Debian's python3-jinja2, and sets Jinja2 up as
# Hugging Face's apply_chat_template does: a sandbox, trim_blocks and
# lstrip_blocks, {% break %}/{% continue %}, {% generation %} blocks, a tojson
# that writes JSON (not HTML-safe text), raise_exception and strftime_now.
import json
from datetime import datetime

import jinja2
from jinja2 import nodes
from jinja2.ext import Extension, loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment


class _Generation(Extension):
    """{% generation %}...{% endgeneration %} marks an assistant's answer for
    training masks; at serving time its body renders as it stands."""

    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        return nodes.CallBlock(self.call_method("_body"), [], [], body).set_lineno(lineno)

    def _body(self, caller):
        return caller()


def _raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def _tojson(value, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent,
                      separators=separators, sort_keys=sort_keys)


_env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                     extensions=[_Generation, loopcontrols])
_env.filters["tojson"] = _tojson
_env.globals["raise_exception"] = _raise_exception


def _describe(error):
    """The error as one line, with the template line it happened on."""
    line = getattr(error, "lineno", None)
    tb = error.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == "<template>":
            line = tb.tb_lineno
        tb = tb.tb_next
    text = str(error) if isinstance(error, jinja2.exceptions.TemplateError) else \
        f"{type(error).__name__}: {error}"
    return f"line {line}: {text}" if line is not None else text


def compile_template(source):
    """(template, "") or (None, what is wrong with the source)."""
    try:
        return _env.from_string(source), ""
    except Exception as error:  # a syntax error, or an unknown filter or test
        return None, _describe(error)


def render(template, extra, context, now):
    """(True, text) or (False, error). extra and context are JSON objects of
    the template's variables (context's win); now is the Unix time that
    strftime_now reads, or None for the clock."""
    try:
        variables = json.loads(extra)
        variables.update(json.loads(context))
        clock = datetime.fromtimestamp(now) if now is not None else None
        variables["strftime_now"] = lambda fmt: (clock or datetime.now()).strftime(fmt)
        return True, template.render(**variables)
    except Exception as error:
        return False, _describe(error)
