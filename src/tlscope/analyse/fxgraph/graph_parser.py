"""Read a printed FX graph (`GraphModule.print_readable` output, as torch logs it) into a FxGraph.

The printed form is Python source, so the structure comes from `ast` (no hand-written grammar
to drift from torch's printer); only what `ast` drops is read from the text: the
`# File: ...` comments giving each node's user line, and the string annotations' inner form.
Variants met in real traces: dynamo output graphs (inputs on one line, `l_x_ = L_x_` aliases),
AOT graphs (one input per line with `# PlainAOTInput` comments, tuple returns spread over lines),
joint graphs (`primals_1, ... = fx_pytree.tree_flatten_spec(...)`), export graphs (indented
under `ExportedProgram:`, followed by the graph signature), DDP split graphs (nested submodule
classes), trailing `# graph id` comments, AOT classes named `<lambda>`, and graphs with or without strides and devices.
"""

from __future__ import annotations

import ast
import re
import textwrap

from tlscope.analyse.fxgraph.model import FxGraph, FxGraphFailure, FxInput, FxNode, FxSource, TensorMeta

_CLASS = re.compile(r"^(\s*)class ([^\s(]+)\(torch\.nn\.Module\):\s*$")
#: AOT graphs print their class as `<lambda>` (and fx_graph_runnable instantiates submodules as
#: `<lambda>()`), which is no Python name: read as this one.
_LAMBDA = "__lambda__"
#: torch 2.13 may print an annotation, `recompute: ...` or `ac_graph_id: ...` before the stack part
#: of the comment (fx/graph.py's `append_stacktrace_summary`): `# recompute: MUST_SAVE File: ...`.
_FILE = re.compile(r"^\s*#(?:.*? )?File: (.*):(\d+) in (.*?), code: (.*)$")
_NO_STACK = re.compile(r"^\s*#.*No stacktrace found for following nodes")
#: Dynamo names a lifted parameter or buffer after its source, `L['self']._modules['fc1']._parameters['weight']`
#: -> `L_self_modules_fc1_parameters_weight_` (the alias node lower-cased: `l_self_...`).
_PARAMETER = re.compile(r"^[Ll]_self_(?:(.*)_)?(?:parameters|buffers)_.+$")
_SUBMODULE = re.compile(r"(?:^|_)modules_")
_TENSOR = re.compile(r"^([a-z]+\d*)\[([^\]]*)\](?:\[([^\]]*)\])?(.*)$")
_SYM = re.compile(r"^Sym\((.*)\)$")


#: A graph payload holds a line `class <name>(torch.nn.Module):`, maybe indented (export graphs).
_CLASS_BYTES = re.compile(rb"^[ \t]*class [^\s(]+\(torch\.nn\.Module\):[ \t]*\r?$", re.MULTILINE)


#: The failure of a text that is no printed graph at all (not a problem: most payloads are not).
NO_CLASS = "no `class ...(torch.nn.Module):` block"


def looks_like_graph(payload: bytes) -> bool:
    """Whether a payload is a printed FX graph (of any event or artifact): what `parse_graph` is
    for. A substring test first, so the regex runs only on the few payloads that may be one."""
    return b"(torch.nn.Module):" in payload and _CLASS_BYTES.search(payload) is not None


def parse_graph(text: str) -> FxGraph | FxGraphFailure:
    """The graph printed in `text`, or why it is not one. Never raises."""
    source = _class_block(text)
    if source is None:
        return FxGraphFailure(NO_CLASS)
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as error:
        return FxGraphFailure(f"not Python source: {type(error).__name__}: {error}")
    classes = [s for s in tree.body if isinstance(s, ast.ClassDef)]
    if not classes:
        return FxGraphFailure("no class in the graph block")
    try:
        return _graph(classes[0], _sources(text))
    except RecursionError:  # an expression nested deeper than the walk of a callee's path allows
        return FxGraphFailure("nested too deeply to read")


def _class_block(text: str) -> str | None:
    """The first graph class and its body, dedented (export graphs print it indented)."""
    lines = text.splitlines()
    for start, line in enumerate(lines):
        found = _CLASS.match(line)
        if found is None:
            continue
        indent = len(found.group(1))
        end = start + 1
        while end < len(lines) and (not lines[end].strip() or _indent(lines[end]) > indent):
            end += 1
        # Blank lines keep the payload's numbering: a node's `line` is its line in the payload.
        block = textwrap.dedent("\n".join(lines[start:end])).replace("<lambda>", _LAMBDA)
        return "\n" * start + block
    return None


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _sources(source: str) -> list[FxSource | None]:
    """Line number -> the user line in force there (set by `# File:`, cleared by `# No stacktrace`),
    computed once so that a graph of thousands of nodes is read in linear time."""
    in_force: list[FxSource | None] = [None]
    current: FxSource | None = None
    for line in source.splitlines():
        found = _FILE.match(line)
        if found is not None:
            path, at, function, code = found.groups()
            current = FxSource(file=path, line=int(at), function=function, code=code)
        elif _NO_STACK.match(line):
            current = None
        in_force.append(current)
    return in_force


def _source_at(marks: list[FxSource | None], line: int) -> FxSource | None:
    return marks[line] if 0 <= line < len(marks) else None


def _graph(cls: ast.ClassDef, marks: list[FxSource | None]) -> FxGraph | FxGraphFailure:
    forward = next((s for s in cls.body if isinstance(s, ast.FunctionDef) and s.name == "forward"), None)
    if forward is None:
        return FxGraphFailure(f"class {cls.name} has no forward")
    subgraphs: dict[str, FxGraph] = {}
    for nested in cls.body:
        if isinstance(nested, ast.ClassDef):
            sub = _graph(nested, marks)
            if isinstance(sub, FxGraphFailure):
                return sub
            subgraphs[nested.name] = sub
    inputs = [FxInput(name=a.arg, meta=_meta(a.annotation)) for a in forward.args.args[1:]]
    nodes, outputs = _body(forward.body, {i.name for i in inputs}, marks)
    _fill_users(nodes)
    _fill_modules(inputs, nodes)
    name = "<lambda>" if cls.name == _LAMBDA else cls.name
    return FxGraph(name=name, inputs=inputs, nodes=nodes, outputs=outputs, subgraphs=subgraphs)


def _body(body: list[ast.stmt], known: set[str], marks: list[FxSource | None]) -> tuple[list[FxNode], list[str]]:
    nodes: list[FxNode] = []
    outputs: list[str] = []
    seen_lines: set[int] = set()
    for statement in body:
        if isinstance(statement, ast.Return):
            outputs = _references(statement.value) if statement.value is not None else []
            continue
        node = _node(statement, marks)
        # `x = None` after a node's `;` frees a value: not a node (one node per assignment line).
        if node is None or statement.lineno in seen_lines:
            continue
        seen_lines.add(statement.lineno)
        nodes.append(node)
        known.update(node.names)
    return nodes, outputs


def _node(statement: ast.stmt, marks: list[FxSource | None]) -> FxNode | None:
    if isinstance(statement, ast.AnnAssign) and statement.value is not None:
        targets: list[ast.expr] = [statement.target]
        value, meta = statement.value, _meta(statement.annotation)
    elif isinstance(statement, ast.Assign):
        targets, value, meta = statement.targets, statement.value, None
    else:
        return None
    if isinstance(value, ast.Constant) and value.value is None:
        return None
    names = [n.id for t in targets[:1] for n in ast.walk(t) if isinstance(n, ast.Name)]
    if not names:
        return None
    op, target = _op(value, targets[0])
    return FxNode(
        name=names[0],
        op=op,
        target=target,
        args=_references(value),
        names=names,
        meta=meta,
        source=_source_at(marks, statement.lineno),
        line=statement.lineno,
    )


def _op(value: ast.expr, target: ast.expr) -> tuple[str, str]:
    if isinstance(target, ast.Tuple):
        return "unpack", _dotted(value.func) if isinstance(value, ast.Call) else type(value).__name__
    if isinstance(value, ast.Name):
        return "placeholder_alias", value.id
    if isinstance(value, ast.Attribute):
        return "get_attr", _dotted(value).removeprefix("self.")
    if isinstance(value, ast.Call):
        callee = _dotted(value.func)
        if callee.startswith("self."):
            return "call_module", callee.removeprefix("self.")
        if isinstance(value.func, ast.Attribute) and _is_method(value.func):
            return "call_method", value.func.attr
        return "call_function", callee
    if isinstance(value, ast.Subscript):
        return "expression", "getitem"
    if isinstance(value, (ast.BinOp, ast.Compare, ast.UnaryOp, ast.BoolOp)):
        return "expression", _operator(value)
    return "expression", type(value).__name__


def _operator(value: ast.expr) -> str:
    if isinstance(value, ast.Compare):
        return type(value.ops[0]).__name__
    if isinstance(value, (ast.BinOp, ast.UnaryOp, ast.BoolOp)):
        return type(value.op).__name__
    return type(value).__name__


#: Roots of dotted callees that name a module, not a node (`torch.ops...`, `operator.getitem`).
_MODULE_ROOTS = frozenset({"torch", "operator", "math", "builtins", "fx_pytree", "pytree", "_operator"})


def _rooted_in_module(func: ast.Attribute) -> bool:
    root: ast.expr = func
    while isinstance(root, ast.Attribute):
        root = root.value
    return isinstance(root, ast.Name) and root.id in _MODULE_ROOTS


def _dotted(expr: ast.expr) -> str:
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        return f"{_dotted(expr.value)}.{expr.attr}"
    return type(expr).__name__


def _references(value: ast.expr) -> list[str]:
    """Names read as values: a callee's path and a module's name are not references, a method's
    receiver (`relu` in `relu.view(4)`) is. One pass with an explicit stack (no recursion limit;
    `ast.walk` per call made this the parser's hot spot), sorted back into source order."""
    found: list[tuple[int, int, str]] = []
    stack: list[ast.AST] = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Name):
            found.append((node.lineno, node.col_offset, node.id))
        elif isinstance(node, ast.Call):
            if _is_method(node.func):
                stack.append(node.func)
            stack.extend(node.args)
            stack.extend(k.value for k in node.keywords)
        elif isinstance(node, ast.Attribute):
            if not (_rooted_in_module(node) or _is_self(node)):
                stack.append(node.value)
        else:
            stack.extend(ast.iter_child_nodes(node))
    return [name for _, _, name in sorted(found)]


def _is_method(func: ast.expr) -> bool:
    return isinstance(func, ast.Attribute) and not _rooted_in_module(func) and not _is_self(func)


def _is_self(node: ast.Attribute) -> bool:
    return _dotted(node).startswith("self.")


def _fill_users(nodes: list[FxNode]) -> None:
    by_name = {name: node for node in nodes for name in node.names}
    for node in nodes:
        for arg in dict.fromkeys(node.args):
            producer = by_name.get(arg)
            if producer is not None and producer is not node:
                producer.users.append(node.name)


def module_of_name(name: str) -> str | None:
    """The nn.Module path (`layers.0.linear`) of a parameter or buffer named by dynamo's rule, ""
    for the compiled module's own, None for any other name."""
    found = _PARAMETER.match(name)
    if found is None:
        return None
    path = found.group(1)
    if not path:
        return ""
    if not path.startswith("modules_"):
        return None
    return ".".join(part for part in _SUBMODULE.split(path) if part)


def _fill_modules(inputs: list[FxInput], nodes: list[FxNode]) -> None:
    """An input's module from its name; a node's: the one module whose parameters or buffers it
    reads directly (an alias of one is that module's too), None when it reads none or several.
    Torch's logged graphs print no `nn_module_stack` (print_readable's `additional_meta` is never
    passed by its logging calls), so this is what a printed graph says of its modules."""
    module_of: dict[str, str] = {}
    for index, graph_input in enumerate(inputs):
        module = module_of_name(graph_input.name)
        if module is not None:
            inputs[index] = FxInput(name=graph_input.name, meta=graph_input.meta, module=module)
            module_of[graph_input.name] = module
    for node in nodes:
        read = {module_of[arg] for arg in node.args if arg in module_of}
        if len(read) == 1:
            node.module = read.pop()
            if node.op == "placeholder_alias":
                module_of[node.name] = node.module


def _meta(annotation: ast.expr | None) -> TensorMeta | None:
    if not (isinstance(annotation, ast.Constant) and isinstance(annotation.value, str)):
        return None
    return parse_annotation(annotation.value)


def parse_annotation(text: str) -> TensorMeta:
    """`"f32[s0, 4][4, 1]cpu"` -> dtype, shape, stride, device; `"Sym(s0)"` -> the expression."""
    sym = _SYM.match(text)
    if sym is not None:
        return TensorMeta(text=text, dtype="Sym", sym=sym.group(1))
    tensor = _TENSOR.match(text)
    if tensor is None:
        return TensorMeta(text=text)
    dtype, sizes, strides, device = tensor.groups()
    return TensorMeta(
        text=text,
        dtype=dtype,
        shape=_dims(sizes),
        stride=_dims(strides) if strides is not None else None,
        device=device.strip(),
    )


def _dims(text: str) -> list[str]:
    return [d.strip() for d in text.split(",") if d.strip()]
