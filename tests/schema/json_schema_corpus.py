"""Tool schemas as OpenAI, Anthropic and MCP tool lists write them, for the schema tests.

Each covers a few keywords the way real tools use them.  The property tests in
``test_json_schema_corpus.py`` compare the models built from them with ``jsonschema``;
none uses a keyword of ``UNENFORCED_KEYWORDS``, and every ``multipleOf`` is a value
binary floating point holds exactly (``jsonschema`` divides floats; the models compare
decimals), so that the two must agree on every instance.

Besides the schemas written here, ``mcp_servers/`` holds the ``tools/list`` results of
real MCP servers from PyPI and npm, and ``agent_frameworks/`` the tool schemas that agent
frameworks from PyPI generate and send for their own tools (LangChain, smolagents, the
OpenAI Agents SDK, Pydantic AI), each file naming its source and version (run once,
saved, in the ``tools/list`` form); each of their tools is in :data:`CORPUS` as
``source/tool``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

CORPUS: dict[str, dict[str, Any]] = {
    # OpenAI's function-calling guide.
    "get_weather": {
        "type": "object",
        "properties": {
            "location": {"type": "string", "description": "City and country e.g. Bogotá, Colombia"},
            "units": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        },
        "required": ["location", "units"],
        "additionalProperties": False,
    },
    # Anthropic's tool-use guide.
    "get_stock_price": {
        "type": "object",
        "properties": {
            "ticker": {"type": "string", "pattern": "^[A-Z]{1,5}$"},
            "exchange": {"type": "string", "enum": ["NYSE", "NASDAQ"], "default": "NYSE"},
        },
        "required": ["ticker"],
    },
    "search_flights": {
        "type": "object",
        "properties": {
            "origin": {"type": "string", "pattern": "^[A-Z]{3}$"},
            "destination": {"type": "string", "pattern": "^[A-Z]{3}$"},
            "date": {"type": "string", "format": "date"},
            "passengers": {"type": "integer", "minimum": 1, "maximum": 9, "default": 1},
            "cabin": {"enum": ["economy", "premium", "business", "first"]},
            "nonstop": {"type": "boolean"},
            "max_price": {"type": "number", "exclusiveMinimum": 0, "multipleOf": 0.25},
        },
        "required": ["origin", "destination", "date"],
        "additionalProperties": False,
    },
    "create_event": {
        "type": "object",
        "properties": {
            "title": {"type": "string", "minLength": 1, "maxLength": 40},
            "attendees": {
                "type": "array",
                "minItems": 1,
                "maxItems": 4,
                "items": {
                    "type": "object",
                    "properties": {
                        "email": {"type": "string", "format": "email"},
                        "name": {"type": "string"},
                        "optional": {"type": "boolean"},
                    },
                    "required": ["email"],
                    "additionalProperties": False,
                },
            },
            "reminders": {
                "type": "array",
                "items": {"type": "integer", "minimum": 0},
                "uniqueItems": True,
                "maxItems": 3,
            },
        },
        "required": ["title", "attendees"],
    },
    # Pydantic-style optionals, as MCP servers written in Python publish them.
    "update_user": {
        "type": "object",
        "properties": {
            "user_id": {"type": "integer"},
            "name": {"anyOf": [{"type": "string", "minLength": 1}, {"type": "null"}]},
            "age": {"anyOf": [{"type": "integer", "minimum": 0, "maximum": 150}, {"type": "null"}]},
            "nickname": {"type": ["string", "null"], "maxLength": 8},
        },
        "required": ["user_id"],
    },
    "write_tree": {
        "type": "object",
        "properties": {"root": {"$ref": "#/$defs/Node"}, "dry_run": {"type": "boolean"}},
        "required": ["root"],
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "minLength": 1},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
                },
                "required": ["name"],
                "additionalProperties": False,
            }
        },
    },
    "draw_shape": {
        "type": "object",
        "properties": {
            "shape": {
                "oneOf": [
                    {
                        "type": "object",
                        "properties": {
                            "kind": {"const": "circle"},
                            "radius": {"type": "number", "exclusiveMinimum": 0},
                        },
                        "required": ["kind", "radius"],
                    },
                    {
                        "type": "object",
                        "properties": {
                            "kind": {"const": "rect"},
                            "width": {"type": "number"},
                            "height": {"type": "number"},
                        },
                        "required": ["kind", "width", "height"],
                    },
                ]
            },
            "stroke": {"oneOf": [{"type": "integer"}, {"type": "number"}]},
        },
        "required": ["shape"],
    },
    "set_metadata": {
        "type": "object",
        "properties": {
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            "counts": {
                "type": "object",
                "additionalProperties": {"type": "integer"},
                "maxProperties": 3,
            },
        },
        "additionalProperties": True,
    },
    "set_env": {
        "type": "object",
        "properties": {
            "env": {
                "type": "object",
                "patternProperties": {"^[A-Z_][A-Z0-9_]*$": {"type": "string"}},
                "additionalProperties": False,
                "propertyNames": {"maxLength": 12},
            }
        },
        "required": ["env"],
    },
    "run_query": {
        "type": "object",
        "allOf": [
            {"$ref": "#/$defs/Paging"},
            {
                "properties": {
                    "mode": {"enum": ["exact", "fuzzy"]},
                    "query": {"type": "string"},
                }
            },
        ],
        "if": {"properties": {"mode": {"const": "exact"}}, "required": ["mode"]},
        "then": {"required": ["query"]},
        "else": {"properties": {"query": {"maxLength": 10}}},
        "$defs": {
            "Paging": {
                "properties": {
                    "limit": {"type": "integer", "minimum": 1, "maximum": 50},
                    "offset": {"type": "integer", "minimum": 0},
                }
            }
        },
    },
    "set_location": {
        "type": "object",
        "properties": {
            "point": {
                "type": "array",
                "prefixItems": [
                    {"type": "number", "minimum": -90, "maximum": 90},
                    {"type": "number", "minimum": -180, "maximum": 180},
                ],
                "items": False,
                "minItems": 2,
            }
        },
        "required": ["point"],
    },
    "plan_steps": {
        "type": "object",
        "properties": {
            "steps": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"text": {"type": "string"}, "final": {"type": "boolean"}},
                },
                "contains": {"properties": {"final": {"const": True}}, "required": ["final"]},
                "maxContains": 1,
            }
        },
    },
    "checkout": {
        "type": "object",
        "properties": {
            "credit_card": {"type": "string", "pattern": "^[0-9]{4}$"},
            "billing_address": {"type": "string"},
            "coupon": {"type": "string"},
        },
        "dependentRequired": {"credit_card": ["billing_address"]},
        "dependentSchemas": {"coupon": {"properties": {"credit_card": {"minLength": 4}}}},
    },
    "create_account": {
        "type": "object",
        "properties": {
            "username": {
                "type": "string",
                "pattern": "^[a-z][a-z0-9_]*$",
                "not": {"enum": ["admin", "root"]},
            },
            "plan": {"enum": [1, "one", None, True]},
        },
        "required": ["username"],
    },
    "annotate": {
        "type": "object",
        "properties": {
            "q&a": {"type": "string"},
            'say "hi"': {"type": "integer"},
            "from": {"type": "string", "maxLength": 3},
            "model_config": {"type": "boolean"},
            "$id": {"type": "string"},
            "q_a": {"type": "number"},
            "città": {"type": "string"},
        },
        "required": ["from"],
    },
    # An MCP file server's tool.
    "read_file": {
        "type": "object",
        "properties": {
            "path": {"type": "string", "minLength": 1},
            "encoding": {"type": "string", "enum": ["utf-8", "latin-1"], "default": "utf-8"},
            "offset": {"type": "integer", "minimum": 0},
            "length": {"type": ["integer", "null"], "minimum": 1},
        },
        "required": ["path"],
        "additionalProperties": False,
    },
    "place_order": {
        "type": "object",
        "properties": {
            "items": {
                "type": "array",
                "minItems": 1,
                "items": {
                    "type": "object",
                    "properties": {
                        "sku": {"type": "string", "pattern": "^SKU-\\d{3}$"},
                        "qty": {"type": "integer", "minimum": 1, "multipleOf": 1},
                    },
                    "required": ["sku", "qty"],
                },
            },
            "shipping": {
                "type": "object",
                "properties": {
                    "address": {
                        "type": "object",
                        "properties": {
                            "street": {"type": "string"},
                            "zip": {"type": "string", "pattern": "^\\d{5}$"},
                        },
                        "required": ["street"],
                    },
                    "express": {"type": "boolean", "default": False},
                },
            },
        },
        "required": ["items"],
        "additionalProperties": False,
    },
    # A closed composition: the properties of the parts, and nothing else.
    "create_ticket": {
        "type": "object",
        "allOf": [{"$ref": "#/$defs/Base"}],
        "properties": {"urgent": {"type": "boolean"}},
        "anyOf": [
            {"properties": {"bug": {"type": "integer"}}, "required": ["bug"]},
            {"properties": {"feature": {"type": "string"}}, "required": ["feature"]},
        ],
        "unevaluatedProperties": False,
        "$defs": {
            "Base": {
                "properties": {"title": {"type": "string", "maxLength": 20}},
                "required": ["title"],
            }
        },
    },
    "log_row": {
        "type": "object",
        "properties": {
            "row": {
                "type": "array",
                "prefixItems": [{"type": "string"}],
                "contains": {"type": "integer"},
                "unevaluatedItems": {"type": "boolean"},
            }
        },
        "required": ["row"],
    },
    # A schema a zod-to-json-schema MCP server publishes (draft-07 forms).
    "legacy_tool": {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {
            "pair": {"type": "array", "items": [{"type": "string"}, {"type": "integer"}]},
            "level": {"$ref": "#/definitions/Level"},
            "ratio": {"type": "number", "minimum": 0, "maximum": 1},
        },
        "definitions": {"Level": {"type": "string", "enum": ["low", "high"]}},
        "dependencies": {"ratio": ["level"]},
    },
}


MCP_SERVERS = Path(__file__).with_name("mcp_servers")
"""The saved ``tools/list`` results: ``{"source": ..., "tools": [...]}`` per server."""


def mcp_tool_lists() -> dict[str, dict[str, Any]]:
    """Each saved server's ``tools/list`` result, by file name."""
    return {
        path.stem: json.loads(path.read_text(encoding="utf-8"))
        for path in sorted(MCP_SERVERS.glob("*.json"))
    }


AGENT_FRAMEWORKS = Path(__file__).with_name("agent_frameworks")
"""Agent frameworks' own tools, saved in the same form as :data:`MCP_SERVERS`."""


def agent_framework_tool_lists() -> dict[str, dict[str, Any]]:
    """Each saved framework's tool list, by file name."""
    return {
        path.stem: json.loads(path.read_text(encoding="utf-8"))
        for path in sorted(AGENT_FRAMEWORKS.glob("*.json"))
    }


for _source, _listing in {**mcp_tool_lists(), **agent_framework_tool_lists()}.items():
    for _tool in _listing["tools"]:
        CORPUS[f"{_source}/{_tool['name']}"] = _tool["inputSchema"]
