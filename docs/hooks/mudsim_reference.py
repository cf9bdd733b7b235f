"""The reference pages' generated parts, rendered from the code itself (pure: no I/O
but reading the engine's own source for attribute docstrings).

``mudsim_docs.py`` (the MkDocs hook) puts each part where a page holds its marker,
``<!-- mudsim:NAME -->``, so a renamed flag, key or command changes the docs on the next
build and nothing here is written twice. ``tests/docs`` uses it too.
"""

from __future__ import annotations

import argparse
import contextlib
import enum
import inspect
import json
import re
import types
import typing
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from engine.world.json_schema import attribute_docstrings

# ---------------------------------------------------------------------------- helpers


def cell(text: object) -> str:
    """Text fit for one cell of a Markdown table."""
    return " ".join(str(text).split()).replace("|", "\\|")


def table(head: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def code(text: str) -> str:
    """Inline code, safe for any backticks inside."""
    fence = "``" if "`" in text else "`"
    pad = " " if fence == "``" else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def demote(markdown: str, levels: int) -> str:
    """Push a Markdown body's headings ``levels`` deeper (a file body under a page heading)."""
    out, fenced = [], False
    for line in markdown.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        if not fenced and re.match(r"#{1,6} ", line):
            line = "#" * levels + line
        out.append(line)
    return "\n".join(out)


# ---------------------------------------------------------------------------- the CLI


def _subcommands(
    parser: argparse.ArgumentParser,
) -> Iterator[tuple[str, str, argparse.ArgumentParser]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
            for name, sub in action.choices.items():
                yield name, helps.get(name, ""), sub


def walk_parser(
    parser: argparse.ArgumentParser, prefix: str = "mudsim"
) -> Iterator[tuple[str, str, argparse.ArgumentParser]]:
    """Every verb under ``parser``, depth first: ``("mudsim world apply", help, parser)``.
    A verb that only groups others (``world``, ``agent``, ``account``) is skipped."""
    for name, summary, sub in _subcommands(parser):
        path = f"{prefix} {name}"
        children = list(_subcommands(sub))
        if not children:
            yield path, summary, sub
        yield from walk_parser(sub, path)


def verbs(parser: argparse.ArgumentParser) -> list[str]:
    """The verbs' names as a user types them: ``run``, ``world apply``, ``serve-llm``..."""
    return [path.removeprefix("mudsim ") for path, _summary, _sub in walk_parser(parser)]


def _help(action: argparse.Action, prog: str) -> str:
    text = action.help or ""
    if "%(" in text:
        with contextlib.suppress(KeyError, TypeError, ValueError):
            text = text % {**vars(action), "prog": prog, "default": action.default}
    return text


def _argument(action: argparse.Action) -> str:
    if not action.option_strings:
        return action.metavar if isinstance(action.metavar, str) else action.dest.upper()
    flags = ", ".join(action.option_strings)
    if action.nargs == 0:
        return flags
    metavar = action.metavar if isinstance(action.metavar, str) else action.dest.upper()
    if action.nargs == "?":
        return f"{flags} [{metavar}]"
    if action.nargs in ("+", "*"):
        return f"{flags} {metavar}..."
    return f"{flags} {metavar}"


def _default(action: argparse.Action) -> str:
    if action.required:
        return "required"
    if action.nargs == 0 or action.default in (None, argparse.SUPPRESS):
        return ""
    if not action.option_strings:
        return ""
    return str(action.default)


def _choices(action: argparse.Action) -> str:
    return f" One of: {', '.join(map(str, action.choices))}." if action.choices else ""


def render_cli(parser: argparse.ArgumentParser) -> str:
    """Every verb: its usage, description and arguments, as ``argparse`` has them."""
    parts = [
        "| verb | what it does |",
        "|---|---|",
        *(
            f"| [{code(path)}](#{slug(path)}) | {cell(summary)} |"
            for path, summary, _sub in walk_parser(parser)
        ),
    ]
    for path, _summary, sub in walk_parser(parser):
        formatter = sub.formatter_class(prog=sub.prog, width=100)  # type: ignore[call-arg]
        formatter.add_usage(sub.usage, sub._actions, sub._mutually_exclusive_groups)
        usage = formatter.format_help().removeprefix("usage: ").strip()
        parts += [f"\n## {path}\n", sub.description or "", "", "```text", usage, "```", ""]
        rows = [
            [code(_argument(a)), _default(a), _help(a, sub.prog) + _choices(a)]
            for a in sub._actions
            if not isinstance(a, argparse._HelpAction | argparse._SubParsersAction)
        ]
        if rows:
            parts.append(table(["argument", "default", "what it does"], rows))
    return "\n".join(parts) + "\n"


def slug(heading: str) -> str:
    """The anchor MkDocs' toc extension gives a heading (``mudsim world apply`` ->
    ``mudsim-world-apply``)."""
    text = re.sub(r"[^\w\s-]", "", heading.lower()).strip()
    return re.sub(r"[\s]+", "-", text)


# ---------------------------------------------------------------------------- pydantic


_LABELS = {str: "text", int: "integer", float: "number", bool: "bool", type(None): "null"}


def flatten(metadata: list[Any]) -> list[Any]:
    """A ``Field(...)`` inside ``Annotated`` holds its constraints in its own metadata."""
    flat: list[Any] = []
    for item in metadata:
        flat += flatten(item.metadata) if isinstance(item, FieldInfo) else [item]
    return flat


def pattern_of(annotation: Any) -> str | None:
    """The pattern an ``Annotated[str, Field(pattern=...)]`` holds."""
    return _constraints(list(getattr(annotation, "__metadata__", ())))[1]


def _constraints(metadata: list[Any]) -> tuple[str, str | None]:
    """Readable bounds (``>= 1``) and a pattern, from a field's or an Annotated's metadata."""
    bounds, pattern = [], None
    for item in flatten(metadata):
        for attr, sign in (("ge", ">="), ("gt", ">"), ("le", "<="), ("lt", "<")):
            value = getattr(item, attr, None)
            if value is not None:
                bounds.append(f"{sign} {value}")
        for attr, word in (("min_length", "at least"), ("max_length", "at most")):
            value = getattr(item, attr, None)
            if value is not None and not (attr == "min_length" and value == 1):
                bounds.append(f"{word} {value} long")
        pattern = getattr(item, "pattern", None) or pattern
    return ", ".join(bounds), pattern


def describe(
    annotation: Any, metadata: list[Any] | None = None, names: dict[str, str] | None = None
) -> str:
    """A type as a reader says it: ``integer >= 1``, ``list of name``, ``text or null``,
    ``"ollama" | "openai"``. ``names`` maps a constrained string's pattern to its name
    (``id``, ``name``)."""
    names = names or {}
    metadata = list(metadata or [])
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        base, *extra = typing.get_args(annotation)
        return describe(base, [*metadata, *extra], names)
    bounds, pattern = _constraints(metadata)
    if pattern is not None and annotation is str:
        return names.get(pattern, f"text matching {code(pattern)}")
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(annotation)
        return " or ".join(describe(a, None if a is type(None) else metadata, names) for a in args)
    if origin is typing.Literal:
        return " | ".join(code(json.dumps(a)) for a in typing.get_args(annotation))
    if origin is list:
        (item,) = typing.get_args(annotation)
        text = f"list of {describe(item, None, names)}"
        return f"{text} ({bounds})" if bounds else text
    if origin is dict:
        key, value = typing.get_args(annotation)
        return f"mapping: {describe(key, None, names)} -> {describe(value, None, names)}"
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return " | ".join(code(json.dumps(m.value)) for m in annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return f"[{annotation.__name__}](#{slug(annotation.__name__)})"
    label = _LABELS.get(annotation, getattr(annotation, "__name__", str(annotation)))
    if annotation is typing.Any:
        label = "any"
    return f"{label} {bounds}".strip()


def default_of(info: FieldInfo) -> str:
    if info.is_required():
        return "required"
    factory = info.default_factory
    value = factory() if factory is not None else info.default  # type: ignore[call-arg]
    if value is PydanticUndefined:
        return "required"
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    elif isinstance(value, dict):
        value = {
            k: v.model_dump(mode="json") if isinstance(v, BaseModel) else v
            for k, v in value.items()
        }
    if isinstance(value, enum.Enum):
        value = value.value
    text = json.dumps(value, ensure_ascii=False)
    return "see the defaults below" if len(text) > 60 else code(text)


def nested_models(model: type[BaseModel]) -> list[type[BaseModel]]:
    """``model`` and every model its fields hold, at any depth, in reading order."""
    seen: list[type[BaseModel]] = []

    def visit(annotation: Any) -> None:
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            if annotation not in seen:
                seen.append(annotation)
                for info in annotation.model_fields.values():
                    visit(info.annotation)
            return
        for arg in typing.get_args(annotation):
            visit(arg)

    visit(model)
    return seen


def model_table(model: type[BaseModel], *, names: dict[str, str] | None = None) -> str:
    """One row per key of ``model``: type, default, and what it means (the field's
    description or its attribute docstring)."""
    docs = attribute_docstrings(model)  # the schema's own reader of field docstrings
    rows = []
    for name, info in model.model_fields.items():
        key = info.alias or name
        meaning = info.description or docs.get(name, "")
        rows.append(
            [code(key), describe(info.annotation, info.metadata, names), default_of(info), meaning]
        )
    return table(["key", "type", "default", "meaning"], rows)


def render_models(
    root: type[BaseModel],
    *,
    level: int = 3,
    names: dict[str, str] | None = None,
    titles: dict[str, str] | None = None,
) -> str:
    """A table for ``root`` and each model nested in it, each under its own heading."""
    titles = titles or {}
    parts = []
    for model in nested_models(root):
        doc = inspect.getdoc(model) if model.__doc__ else ""
        title = titles.get(model.__name__, model.__name__)
        parts += [
            f"{'#' * level} {title}"
            + (f" {{#{slug(model.__name__)}}}" if title != model.__name__ else ""),
            "",
        ]
        if doc:
            parts += [doc, ""]
        parts += [model_table(model, names=names), ""]
    return "\n".join(parts)


# ---------------------------------------------------------------------------- config files


class _Dumper(yaml.SafeDumper):
    """Texts with a line break in double quotes (``"\\n"``), as the vault writes them."""


def _text(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = '"' if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _text)


def render_config(files: dict[str, tuple[type[BaseModel], str]]) -> str:
    """Each ``vault/config/*.md``: its keys, the front matter a new vault gets, and the
    text written below it."""
    parts = []
    for name, (model, body) in files.items():
        parts += [f"## config/{name}", ""]
        parts += [render_models(model, level=3, titles={model.__name__: f"Keys of {name}"}), ""]
        defaults = yaml.dump(
            model().model_dump(mode="json"), Dumper=_Dumper, sort_keys=False, allow_unicode=True
        )
        parts += [
            f"A new vault's `config/{name}` starts with these values:",
            "",
            "```yaml",
            defaults.rstrip(),
            "```",
            "",
        ]
        parts += ["What the file's body says:", "", demote(body, 3).rstrip(), ""]
    return "\n".join(parts)


# ---------------------------------------------------------------------------- commands


def render_commands(registry: Any, categories: dict[str, str]) -> str:
    parts = []
    commands = list(registry.commands.values())
    for category, blurb in categories.items():
        members = [c for c in commands if c.category == category]
        if not members:
            continue
        parts += [f"## {category.capitalize()}", "", f"{blurb.capitalize()}.", ""]
        rows = []
        for c in members:
            names = ", ".join(code(n) for n in c.names)
            extra = (
                " Spends model calls (a served world limits who may run it)."
                if c.spends_model_calls
                else ""
            )
            rows.append([names, code(c.syntax), str(c.role.value), c.help + extra, code(c.example)])
        parts += [table(["command", "syntax", "role", "what it does", "example"], rows), ""]
    return "\n".join(parts)


# ---------------------------------------------------------------------------- markers

Renderer = Callable[[], str]
MARKER = re.compile(r"^<!-- mudsim:([a-z-]+) -->$", re.MULTILINE)


def fill(markdown: str, renderers: dict[str, Renderer], where: str) -> str:
    """Replace each ``<!-- mudsim:NAME -->`` line with what ``renderers[NAME]`` renders."""

    def one(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in renderers:
            raise KeyError(f"{where}: no generator called {name!r} (known: {', '.join(renderers)})")
        return renderers[name]()

    return MARKER.sub(one, markdown)


def read_yaml(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8"))
