"""YAML that cannot hurt us: the pure-Python safe loader with a nesting limit.

``yaml.safe_load`` (and python-frontmatter, which uses libyaml's C loader when it is
there) recurses once per nesting level: ``[[[[...`` a few thousand deep raises
``RecursionError`` in the Python loader and crashes the whole process with SIGSEGV in
the C one. Every YAML mudsim reads (world files, front matter, the world snapshot)
goes through ``DepthLimitedLoader``, which refuses nesting deeper than ``MAX_DEPTH``
while it scans, before anything recurses; a value it cannot build (a date such as
2024-02-30) is a YAML error at that value's line, not a bare ``ValueError``.
"""

from __future__ import annotations

from typing import Any

import yaml

MAX_DEPTH = 64
"""Nesting levels a mudsim YAML document may use (a world file needs five)."""


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


def too_deep(mark: yaml.Mark | None) -> yaml.MarkedYAMLError:
    return yaml.scanner.ScannerError(None, None, f"nested more than {MAX_DEPTH} levels deep", mark)


def load_yaml(text: str) -> Any:
    """The data of one YAML document; every problem is a ``yaml.YAMLError``."""
    loader = DepthLimitedLoader(text)
    try:
        return loader.get_single_data()
    except RecursionError as exc:  # a guard missed (anchors, aliases): still one error
        raise too_deep(None) from exc
    finally:
        loader.dispose()
