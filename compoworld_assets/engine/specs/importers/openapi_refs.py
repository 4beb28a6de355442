"""Local ``$ref`` resolution for OpenAPI documents, with cycle protection and depth-bounded inlining.

Imported tool schemas must be self-contained (the document does not travel with them), so
referenced schemas are inlined; recursion is cut at a cycle or at ``max_depth`` nesting levels,
where the schema is replaced by a bare ``{"type": "object"}`` that names what was cut.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

SCHEMA_PREFIX = "#/components/schemas/"
_DROPPED_KEYS = frozenset({"xml", "externalDocs", "discriminator", "not"})
_MAX_REF_CHAIN = 32


class RefError(ValueError):
    """A ``$ref`` that is external, broken, or part of a pure cycle."""


class RefResolver:
    def __init__(self, document: dict[str, Any]):
        self.document = document
        self._inlined: dict[tuple[str, int], dict[str, Any]] = {}

    def lookup(self, ref: str) -> Any:
        if not isinstance(ref, str) or not ref.startswith("#/"):
            raise RefError(f"unsupported $ref {ref!r} (only local refs are resolved)")
        node: Any = self.document
        for raw in ref[2:].split("/"):
            part = unquote(raw).replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and part in node:
                node = node[part]
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                raise RefError(f"broken $ref {ref!r}")
        return node

    def deref(self, node: Any) -> tuple[Any, str | None]:
        """Follow a chain of top-level ``$ref`` s; returns the target and its component schema name."""
        name = None
        seen: set[str] = set()
        while isinstance(node, dict) and "$ref" in node:
            ref = node["$ref"]
            if not isinstance(ref, str):
                raise RefError(f"$ref is not a string ({type(ref).__name__})")
            if ref in seen or len(seen) > _MAX_REF_CHAIN:
                raise RefError(f"$ref cycle at {ref!r}")
            seen.add(ref)
            if isinstance(ref, str) and ref.startswith(SCHEMA_PREFIX):
                name = ref[len(SCHEMA_PREFIX) :]
            node = self.lookup(ref)
        return node, name

    def inline(self, schema: Any, max_depth: int = 3) -> dict[str, Any]:
        """A self-contained copy of ``schema`` with refs inlined up to ``max_depth`` levels."""
        return self._inline(schema, max_depth, ())

    def _inline(self, schema: Any, depth: int, stack: tuple[str, ...]) -> dict[str, Any]:
        if not isinstance(schema, dict):
            return {}
        if "$ref" in schema:
            ref = schema["$ref"]
            if not isinstance(ref, str):
                raise RefError(f"$ref is not a string ({type(ref).__name__})")
            if ref in stack or depth < 0:
                return self._cut(ref)
            key = (ref, depth)
            if key not in self._inlined:
                self._inlined[key] = self._inline(self.lookup(ref), depth, (*stack, ref))
            extra = {k: v for k, v in schema.items() if k in ("description", "nullable")}
            return {**self._inlined[key], **extra} if extra else self._inlined[key]
        out: dict[str, Any] = {}
        for key, value in schema.items():
            if key in _DROPPED_KEYS:
                continue
            if key == "properties" and isinstance(value, dict):
                if depth <= 0:
                    continue
                out[key] = {str(k): self._inline(v, depth - 1, stack) for k, v in value.items()}
            elif key in ("items", "additionalProperties") and isinstance(value, dict):
                out[key] = self._inline(value, depth - 1, stack) if depth > 0 else {}
            elif key in ("allOf", "anyOf", "oneOf") and isinstance(value, list):
                if depth > 0:
                    out[key] = [self._inline(v, depth - 1, stack) for v in value]
            else:
                out[key] = value
        return out

    def _cut(self, ref: Any) -> dict[str, Any]:
        """The stand-in for a schema not expanded: its JSON type (object if unknown) and its name."""
        target, _ = self.deref({"$ref": ref})
        json_type = target.get("type") if isinstance(target, dict) else None
        label = ref[len(SCHEMA_PREFIX) :] if isinstance(ref, str) and ref.startswith(SCHEMA_PREFIX) else ref
        return {
            "type": json_type if isinstance(json_type, str) else "object",
            "description": f"{label} (nested schema not expanded)",
        }
