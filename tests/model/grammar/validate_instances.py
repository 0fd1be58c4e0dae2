#!/usr/bin/env python3
"""Checks generated JSON texts against their schemas, for json_schema_grammar_test.

Usage: validate_instances.py LINES_FILE SCHEMA_DIR

Each line of LINES_FILE is {"schema_file": NAME or null, "instance": TEXT}.
TEXT must parse as JSON (json.loads) and be valid under SCHEMA_DIR/NAME
(jsonschema's Draft 2020-12 validator, formats checked); with a null
schema_file it must be a JSON object. Prints "ok: N instances" and exits 0,
or prints the first failure and exits 1.
"""

import json
import os
import sys

import jsonschema

FORMATS = {"date", "time", "date-time", "uuid", "email", "ipv4"}


def fail(number, name, text, message):
    print(f"FAIL line {number}: {name}: {text!r}: {message}")
    sys.exit(1)


def main():
    lines_path, schema_dir = sys.argv[1], sys.argv[2]
    # NOTE: the 2020-12 checker, not FormatChecker(): that one mixes the
    # drafts, and its "time" is draft 3's (HH:MM:SS, no offset).
    checker = getattr(jsonschema.Draft202012Validator, "FORMAT_CHECKER", None)
    if checker is None:
        checker = jsonschema.draft202012_format_checker
    missing = FORMATS - set(checker.checkers)
    if missing:
        print(f"note: this jsonschema does not check formats {sorted(missing)}", file=sys.stderr)
    validators = {}
    count = 0
    with open(lines_path, encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            record = json.loads(line)
            name, text = record["schema_file"], record["instance"]
            try:
                instance = json.loads(text)
            except ValueError as e:
                fail(number, name, text, f"not JSON: {e}")
            if name is None:
                if not isinstance(instance, dict):
                    fail(number, name, text, "not a JSON object")
            else:
                if name not in validators:
                    with open(os.path.join(schema_dir, name), encoding="utf-8") as f:
                        schema = json.load(f)
                    jsonschema.Draft202012Validator.check_schema(schema)
                    validators[name] = jsonschema.Draft202012Validator(
                        schema, format_checker=checker)
                error = jsonschema.exceptions.best_match(validators[name].iter_errors(instance))
                if error is not None:
                    fail(number, name, text, error.message)
            count += 1
    print(f"ok: {count} instances")


if __name__ == "__main__":
    main()
