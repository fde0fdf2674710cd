#!/usr/bin/python3
"""Validates a `hotline export --format json` file against docs/export-schema.json, then checks
the invariants the schema states (line times and self times add up to the total; self plus the
callees' time is each function's inclusive time). Usage: validate_export_json.py SCHEMA FILE.
Exits 0 when valid, 1 with the reason, 2 when python3-jsonschema is missing."""
import json
import sys

try:
    import jsonschema
except ImportError:
    print("python3-jsonschema is not installed", file=sys.stderr)
    sys.exit(2)

schema_path, doc_path = sys.argv[1], sys.argv[2]
with open(schema_path) as f:
    schema = json.load(f)
with open(doc_path) as f:
    doc = json.load(f)
try:
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft202012Validator(schema).validate(doc)
except jsonschema.ValidationError as e:
    print(f"{doc_path}: {e.message} at {list(e.absolute_path)}", file=sys.stderr)
    sys.exit(1)

total = doc["summary"]["total_ns"]
problems = []
if sum(l["time_ns"] for l in doc["lines"]) != total:
    problems.append("the lines' time is not the total")
if sum(f["self_ns"] for f in doc["functions"]) != total:
    problems.append("the functions' self time is not the total")
callees = {}
for e in doc["call_graph"]:
    callees[e["caller"]] = callees.get(e["caller"], 0) + e["time_ns"]
for i, f in enumerate(doc["functions"]):
    if f["self_ns"] + callees.get(i, 0) != f["inclusive_ns"]:
        problems.append(f"{f['name']}: self + callees != inclusive")
for p in problems:
    print(f"{doc_path}: {p}", file=sys.stderr)
sys.exit(1 if problems else 0)
