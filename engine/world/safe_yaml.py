"""YAML that cannot hurt us: the pure-Python safe loader with limits.

``yaml.safe_load`` (and python-frontmatter, which uses libyaml's C loader when it is
there) recurses once per nesting level: ``[[[[...`` a few thousand deep raises
``RecursionError`` in the Python loader and crashes the whole process with SIGSEGV in
the C one; a few aliases of aliases expand to billions of values. Every YAML mudsim
reads (world files, front matter, the world snapshot) goes through this module:

- ``DepthLimitedLoader`` refuses nesting deeper than ``MAX_DEPTH`` while it scans,
  before anything recurses, and makes a value it cannot build (a date such as
  2024-02-30) a YAML error at that value's line, not a bare ``ValueError``;
- ``measure`` refuses a node tree nested too deep, too big once its aliases are
  expanded (``MAX_VALUES``), or holding an alias inside the value it names, in one
  pass without recursion, before the tree is built.

Every refusal is a ``YAMLLimitError`` (a ``yaml.MarkedYAMLError``, with its line).
"""

from __future__ import annotations

from typing import Any

import yaml

MAX_DEPTH = 64
"""Nesting levels a mudsim YAML document may use (a world file needs five)."""
MAX_VALUES = 200_000
"""Values a document may hold once its aliases are expanded."""


class YAMLLimitError(yaml.MarkedYAMLError):
    """A document past one of the limits (its ``problem`` says which)."""


class DepthLimitedLoader(yaml.SafeLoader):
    def fetch_flow_collection_start(self, TokenClass: Any) -> None:
        if self.flow_level >= MAX_DEPTH:  # refused early: deep nesting makes scanning slow
            raise too_deep(self.get_mark())
        super().fetch_flow_collection_start(TokenClass)

    def add_indent(self, column: int) -> bool:
        added = super().add_indent(column)
        if len(self.indents) > MAX_DEPTH:
            raise too_deep(self.get_mark())
        return added

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        try:
            return super().construct_object(node, deep)
        except (ValueError, TypeError, OverflowError) as exc:
            raise yaml.constructor.ConstructorError(
                None, None, f"cannot read this value ({exc})", node.start_mark
            ) from exc


def too_deep(mark: yaml.Mark | None) -> YAMLLimitError:
    return YAMLLimitError(None, None, f"nested more than {MAX_DEPTH} levels deep", mark)


def children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def measure(root: yaml.Node) -> None:
    """Refuse a node tree nested too deep, too big once its aliases are expanded, or
    holding an alias inside the value it names; each shared node measured once."""
    size: dict[int, int] = {}
    depth: dict[int, int] = {}
    started: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if children_done:
            below = children(node)
            size[key] = 1 + sum(size[id(child)] for child in below)
            depth[key] = 1 + max((depth[id(child)] for child in below), default=0)
            started.discard(key)
            if depth[key] > MAX_DEPTH:
                raise too_deep(node.start_mark)
            if size[key] > MAX_VALUES:
                raise YAMLLimitError(
                    None, None, f"its aliases expand to more than {MAX_VALUES:,} values",
                    node.start_mark,
                )  # fmt: skip
            continue
        if key in size:
            continue
        started.add(key)
        stack.append((node, True))
        for child in children(node):
            if id(child) in started:
                raise YAMLLimitError(
                    None, None, "an alias is used inside the value it names", child.start_mark
                )
            if id(child) not in size:
                stack.append((child, False))


def load_yaml(text: str) -> Any:
    """The data of one YAML document; every problem is a ``yaml.YAMLError``."""
    loader = DepthLimitedLoader(text)
    try:
        root = loader.get_single_node()
        if root is None:
            return None
        measure(root)
        return loader.construct_document(root)
    except RecursionError as exc:  # a guard missed: still one error, never a crash
        raise too_deep(None) from exc
    finally:
        loader.dispose()
