"""The bundle's JSON members follow docs/bundle.schema.json (checked with a small validator of
the keywords the schema uses: jsonschema is not a dependency), and docs/bundle.md names every
member a bundle holds."""

from __future__ import annotations

import json
import re

from tests.bundle.test_archive import members_of
from tests.conftest import REPO

DOCS = REPO / "docs"


def _resolve(ref, root):
    name, _, pointer = ref.partition("#")
    if name:
        root = json.loads((DOCS / name).read_text())
    target = root
    for part in pointer.lstrip("/").split("/"):
        target = target[part]
    return target, root


def validate(instance, schema, root, path="$"):
    if "$ref" in schema:
        target, new_root = _resolve(schema["$ref"], root)
        return validate(instance, target, new_root, path)
    types = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None),
             "integer": int, "number": (int, float)}
    if "type" in schema:
        allowed = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        assert any(isinstance(instance, types[t]) and not (
            t in ("integer", "number") and isinstance(instance, bool)) for t in allowed), \
            f"{path}: {type(instance).__name__} is not {allowed}"
    if "const" in schema:
        assert instance == schema["const"], path
    if "pattern" in schema:
        assert re.search(schema["pattern"], instance), f"{path}: {instance!r}"
    if isinstance(instance, dict):
        for key in schema.get("required", []):
            assert key in instance, f"{path}: missing {key}"
        props = schema.get("properties", {})
        for key, value in instance.items():
            if key in props:
                validate(value, props[key], root, f"{path}.{key}")
            elif schema.get("additionalProperties") is False:
                raise AssertionError(f"{path}: unexpected key {key}")
            elif isinstance(schema.get("additionalProperties"), dict):
                validate(value, schema["additionalProperties"], root, f"{path}.{key}")
    if isinstance(instance, list) and "items" in schema:
        for i, item in enumerate(instance):
            validate(item, schema["items"], root, f"{path}[{i}]")


def test_members_follow_the_schema(measured, bundled):
    _, uid = measured
    schema = json.loads((DOCS / "bundle.schema.json").read_text())
    members = members_of(bundled)
    doc = lambda name: json.loads(members[name])  # noqa: E731
    validate(doc("manifest.json"), schema, schema)
    for name, definition in (("data/sessions.json", "data"),
                             (f"protocols/{uid}.json", "protocol"),
                             ("provenance/executables.json", "executables"),
                             ("provenance/software.json", "software"),
                             ("analysis/analysis.json", "analysis")):
        validate(doc(name), schema["$defs"][definition], schema, name)


def test_the_schema_catches_a_wrong_member():
    schema = json.loads((DOCS / "bundle.schema.json").read_text())
    try:
        validate({"format": "benchlab-bundle", "format_version": 1, "benchlab_version": "0",
                  "sessions": [], "members": [{"name": "x", "size": 1, "sha256": "abc"}]},
                 schema, schema)
    except AssertionError as exc:
        assert "sha256" in str(exc)
    else:
        raise AssertionError("a 3-character digest passed the schema")


def test_docs_name_every_member(bundled):
    text = (DOCS / "bundle.md").read_text()
    for name in members_of(bundled):
        generic = re.sub(r"protocols/\w+\.json", "protocols/<uid>.json", name)
        generic = re.sub(r"sources/\w+\.c", "sources/<workload>.c", generic)
        assert f"`{generic}`" in text, generic
