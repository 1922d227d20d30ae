"""Export mode (-e): draft-export failures, symbolic guard pages and the export index (reference §8).

tlparse inserts the guard expression, fake-kernel op and reason, locals and the sym-expr tree
unescaped and panics when a field is missing; here every value is escaped and a missing field
renders empty. The events come typed (write/report/handlers.py registers these methods).
"""

from __future__ import annotations

from typing import Any

import msgspec
from markupsafe import Markup

from tlscope.analyse.tlparse.directory import CompileDirectory
from tlscope.analyse.tlparse.stack import resolve_stack
from tlscope.model.events import (
    CreateUnbackedSymbol,
    ExpressionCreated,
    FrameLocals,
    GuardAdded,
    MismatchedFakeKernel,
    MissingFakeKernel,
    PropagateRealTensorsProvenance,
)
from tlscope.model.record import Record
from tlscope.write.report import pages
from tlscope.write.report.stacks import format_stack

_FAKE_KERNEL_DOC = (
    "https://docs.google.com/document/d/1_W62p8WJOQQUzPsJYa7s701JXt0qf2OfLub2sbkHOaU/edit#heading=h.ahugy69p2jmz"
)
#: The guard events with a page: their fields the page shows.
GuardEvent = GuardAdded | PropagateRealTensorsProvenance


class GuardPage(msgspec.Struct, frozen=True):
    """A symbolic_guard_information page waiting for its numbered path."""

    failure_type: str
    reason: Markup
    context: dict[str, Any]


class ExportFailure(msgspec.Struct, frozen=True):
    """A row of the export index's issue table."""

    failure_type: str
    reason: Markup
    additional_info: Markup


class SymNode(msgspec.Struct, frozen=True):
    """A node of a guard's expression tree (a symbolic expression or an unbacked symbol)."""

    result: str
    method: str
    arguments: list[str]
    argument_ids: list[int]
    user_stack_html: Markup
    stack_html: Markup


class ExportState:
    def __init__(self) -> None:
        self.failures: list[ExportFailure] = []
        self._sym_exprs: dict[int, SymNode] = {}

    # -- events ------------------------------------------------------------------------------

    def guard_evaluated(self, guard: GuardAdded, record: Record) -> GuardPage | None:
        if guard.prefix != "eval":
            return None
        reason = Markup(
            "When exporting, the following guard was evaluated <code>{}</code>. This\n"
            "                    might've resulted in a constraint violation error."
        ).format(pages.text(guard.expr))
        return GuardPage("Guard Evaluated", reason, self._guard_context(guard, record))

    def data_dependent(self, provenance: PropagateRealTensorsProvenance, record: Record) -> GuardPage:
        reason = Markup(
            "When exporting, we were unable to figure out if the\n"
            "                    expression <code>{}</code> always holds.<br> As a result, it\n"
            "                    was specialized to evaluate to <code>{}</code>, and asserts\n"
            "                    were inserted into the graph."
        ).format(pages.text(provenance.expr), pages.text(provenance.result))
        return GuardPage("Data Dependent Error", reason, self._guard_context(provenance, record))

    def missing_fake_kernel(self, missing: MissingFakeKernel) -> None:
        self._fake_kernel(
            "Missing Fake Kernel",
            Markup("<code>torch.ops.{}</code> is missing a fake kernel implementation").format(pages.text(missing.op)),
        )

    def mismatched_fake_kernel(self, mismatched: MismatchedFakeKernel) -> None:
        self._fake_kernel(
            "Mismatched Fake Kernel",
            Markup(
                "<code>torch.ops.{}</code> has a fake kernel implementation,\n"
                "                    but it has incorrect behavior, based on the real kernel.<br>\n"
                "                    The reason for the mismatch is: {}"
            ).format(pages.text(mismatched.op), pages.text(mismatched.reason)),
        )

    def expression_created(self, created: ExpressionCreated, record: Record) -> None:
        if created.result_id is not None:
            self._sym_exprs[created.result_id] = _node(
                created,
                record,
                pages.text(created.result),
                pages.text(created.method),
                [pages.text(a) for a in created.arguments or ()],
                [a for a in created.argument_ids or () if a is not None],
            )

    def unbacked_symbol(self, unbacked: CreateUnbackedSymbol, record: Record) -> None:
        if unbacked.node_id is not None:
            self._sym_exprs[unbacked.node_id] = _node(unbacked, record, pages.text(unbacked.symbol), "", [], [])

    # -- pages -------------------------------------------------------------------------------

    def _fake_kernel(self, failure_type: str, reason: Markup) -> None:
        info = Markup(
            "Please refer to <a href='{}'>this doc</a> for more detailed instructions on how to write a fake kernel."
        ).format(_FAKE_KERNEL_DOC)
        self.failures.append(ExportFailure(failure_type, reason, info))

    def _guard_context(self, guard: GuardEvent, record: Record) -> dict[str, Any]:
        frame_locals = guard.frame_locals or FrameLocals()
        return {
            "expr": pages.text(guard.expr),
            "user_stack_html": format_stack(resolve_stack(guard.user_stack, record), "User Stack", True),
            "stack_html": format_stack(resolve_stack(guard.stack, record), "Framework Stack"),
            "locals": _pairs(frame_locals.locals),
            "symbols": _pairs(frame_locals.symbols),
            "tree": self._tree(guard.expr_node_id),
        }

    def _tree(self, root: int | None) -> list[tuple[int, SymNode]]:
        """Depth-first over the sym-expr nodes seen earlier; a visited set guards against cycles."""
        cards: list[tuple[int, SymNode]] = []
        if root is None:
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
            work.extend((child, depth + 1) for child in reversed(node.argument_ids))
        return cards

    def page_html(self, page: GuardPage, rel: str) -> str:
        info = Markup("Please click <a href='{}'>here</a> for more information.").format(rel)
        self.failures.append(ExportFailure(page.failure_type, page.reason, info))
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


def _node(
    event: ExpressionCreated | CreateUnbackedSymbol,
    record: Record,
    result: str,
    method: str,
    arguments: list[str],
    argument_ids: list[int],
) -> SymNode:
    user_stack = format_stack(resolve_stack(event.user_stack, record), "User Stack", True)
    stack = format_stack(resolve_stack(event.stack, record), "Framework Stack")
    return SymNode(result, method, arguments, argument_ids, user_stack, stack)


def _pairs(value: dict[str, Any] | None) -> list[tuple[str, str]]:
    """Non-null locals, sorted by name (tlparse prints them in hash-map order)."""
    return [(str(k), pages.text(v)) for k, v in sorted((value or {}).items()) if v is not None]
