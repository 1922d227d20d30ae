"""Export mode (-e): draft-export failures, symbolic guard pages and the export index (reference §8).

tlparse inserts the guard expression, fake-kernel op and reason, locals and the sym-expr tree
unescaped and panics when a field is missing; here every value is escaped and a missing field
renders empty.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from markupsafe import Markup

from tlscope.analyse.directory import CompileDirectory
from tlscope.analyse.stack import format_stack
from tlscope.model.compile_id import CompileId
from tlscope.model.record import Record
from tlscope.write.report import pages

_FAKE_KERNEL_DOC = (
    "https://docs.google.com/document/d/1_W62p8WJOQQUzPsJYa7s701JXt0qf2OfLub2sbkHOaU/edit#heading=h.ahugy69p2jmz"
)


class GuardPage:
    """A symbolic_guard_information page waiting for its numbered path."""

    def __init__(self, failure_type: str, reason: Markup, context: dict[str, Any]) -> None:
        self.failure_type = failure_type
        self.reason = reason
        self.context = context


class ExportState:
    def __init__(self) -> None:
        self.failures: list[dict[str, Any]] = []
        self._sym_exprs: dict[int, dict[str, Any]] = {}

    def feed(self, record: Record, cid: CompileId | None, cid_dir: str) -> Iterator[GuardPage]:
        env = record.envelope
        guard = _obj(env.get("guard_added"))
        if guard is not None and guard.get("prefix") == "eval":
            reason = Markup(
                "When exporting, the following guard was evaluated <code>{}</code>. This\n"
                "                    might've resulted in a constraint violation error."
            ).format(_text(guard.get("expr")))
            yield GuardPage("Guard Evaluated", reason, self._guard_context(guard, record))
        provenance = _obj(env.get("propagate_real_tensors_provenance"))
        if provenance is not None:
            reason = Markup(
                "When exporting, we were unable to figure out if the\n"
                "                    expression <code>{}</code> always holds.<br> As a result, it\n"
                "                    was specialized to evaluate to <code>{}</code>, and asserts\n"
                "                    were inserted into the graph."
            ).format(_text(provenance.get("expr")), _text(provenance.get("result")))
            yield GuardPage("Data Dependent Error", reason, self._guard_context(provenance, record))
        missing = _obj(env.get("missing_fake_kernel"))
        if missing is not None:
            self._fake_kernel(
                "Missing Fake Kernel",
                Markup("<code>torch.ops.{}</code> is missing a fake kernel implementation").format(
                    _text(missing.get("op"))
                ),
            )
        mismatched = _obj(env.get("mismatched_fake_kernel"))
        if mismatched is not None:
            self._fake_kernel(
                "Mismatched Fake Kernel",
                Markup(
                    "<code>torch.ops.{}</code> has a fake kernel implementation,\n"
                    "                    but it has incorrect behavior, based on the real kernel.<br>\n"
                    "                    The reason for the mismatch is: {}"
                ).format(_text(mismatched.get("op")), _text(mismatched.get("reason"))),
            )
        self._index(env, record)

    def _fake_kernel(self, failure_type: str, reason: Markup) -> None:
        info = Markup(
            "Please refer to <a href='{}'>this doc</a> for more detailed instructions on how to write a fake kernel."
        ).format(_FAKE_KERNEL_DOC)
        self.failures.append({"failure_type": failure_type, "reason": reason, "additional_info": info})

    def _index(self, env: dict[str, Any], record: Record) -> None:
        created = _obj(env.get("expression_created"))
        if created is not None and _is_id(created.get("result_id")):
            self._sym_exprs[created["result_id"]] = self._node(created, record)
        unbacked = _obj(env.get("create_unbacked_symbol"))
        if unbacked is not None and _is_id(unbacked.get("node_id")):
            node = self._node(unbacked, record)
            node["result"] = _text(unbacked.get("symbol"))
            node["method"] = ""
            node["arguments"] = []
            node["argument_ids"] = []
            self._sym_exprs[unbacked["node_id"]] = node

    def _node(self, data: dict[str, Any], record: Record) -> dict[str, Any]:
        arguments = data.get("arguments")
        argument_ids = data.get("argument_ids")
        return {
            "result": _text(data.get("result")),
            "method": _text(data.get("method")),
            "arguments": [_text(a) for a in arguments] if isinstance(arguments, list) else [],
            "argument_ids": [a for a in argument_ids if _is_id(a)] if isinstance(argument_ids, list) else [],
            "user_stack_html": format_stack(pages._stack(data.get("user_stack"), record), "User Stack", True),
            "stack_html": format_stack(pages._stack(data.get("stack"), record), "Framework Stack"),
        }

    def _guard_context(self, guard: dict[str, Any], record: Record) -> dict[str, Any]:
        frame_locals = _obj(guard.get("frame_locals")) or {}
        return {
            "expr": _text(guard.get("expr")),
            "user_stack_html": format_stack(pages._stack(guard.get("user_stack"), record), "User Stack", True),
            "stack_html": format_stack(pages._stack(guard.get("stack"), record), "Framework Stack"),
            "locals": _pairs(frame_locals.get("locals")),
            "symbols": _pairs(frame_locals.get("symbols")),
            "tree": self._tree(guard.get("expr_node_id")),
        }

    def _tree(self, root: Any) -> list[tuple[int, dict[str, Any]]]:
        """Depth-first over the sym-expr nodes seen earlier; a visited set guards against cycles."""
        cards: list[tuple[int, dict[str, Any]]] = []
        if not _is_id(root):
            return cards
        visited: set[int] = set()
        work: list[tuple[int, int]] = [(root, 0)]
        while work:
            node_id, depth = work.pop()
            if node_id in visited:
                continue
            visited.add(node_id)
            node = self._sym_exprs.get(node_id)
            if node is None:
                continue
            cards.append((depth, node))
            work.extend((child, depth + 1) for child in reversed(node["argument_ids"]))
        return cards

    def page_html(self, page: GuardPage, rel: str) -> str:
        info = Markup("Please click <a href='{}'>here</a> for more information.").format(rel)
        self.failures.append({"failure_type": page.failure_type, "reason": page.reason, "additional_info": info})
        return pages.render("symbolic_guard_information.html.jinja", **page.context)

    def index(self, directory: CompileDirectory, custom_header_html: str) -> str:
        program = next(
            (e.url for _, entries in directory.items() for e in entries if "exported_program" in e.url and not e.link),
            "",
        )
        return pages.render(
            "export_index.html.jinja",
            custom_header_html=pages.trusted(custom_header_html),
            failures=self.failures,
            exported_program_url=program,
        )


def _obj(value: Any) -> dict[str, Any] | None:
    return value if isinstance(value, dict) else None


def _is_id(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def _pairs(value: Any) -> list[tuple[str, str]]:
    """Non-null locals, sorted by name (tlparse prints them in hash-map order)."""
    if not isinstance(value, dict):
        return []
    return [(str(k), _text(v)) for k, v in sorted(value.items()) if v is not None]
