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
import functools
import re
import sys
import textwrap
from typing import Any, Literal

from tlscope.analyse.fxgraph.model import FxGraph, FxGraphFailure, FxInput, FxNode, FxSource, TensorMeta
from tlscope.analyse.fxgraph.stored import from_stored, to_stored
from tlscope.format.graph_file import StoredGraph, StoredInput, StoredNode

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
    try:
        fast = _read_lines(text)
    except RecursionError:
        fast = None
    return fast if fast is not None else parse_graph_ast(text)


def stored_graph(text: str) -> StoredGraph | FxGraphFailure:
    """`parse_graph`'s answer in its stored form (`to_stored`'s, graphs/<md5>.json's): the line
    reader makes it directly, the ast reader's FxGraph is converted. Never raises."""
    try:
        fast = _read_stored(text)
    except RecursionError:
        fast = None
    if fast is not None:
        return fast
    parsed = parse_graph_ast(text)
    return parsed if isinstance(parsed, FxGraphFailure) else to_stored(parsed)


def parse_graph_ast(text: str) -> FxGraph | FxGraphFailure:
    """`parse_graph` by `ast` alone: every form, the reference the line reader is tested against."""
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
        return _graph(classes[0], _sources(text.splitlines()))
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


def _sources(lines: list[str]) -> list[FxSource | None]:
    """Line number -> the user line in force there (set by `# File:`, cleared by `# No stacktrace`),
    computed once so that a graph of thousands of nodes is read in linear time."""
    in_force: list[FxSource | None] = [None]
    current: FxSource | None = None
    for line in lines:
        if "#" not in line:  # most lines are nodes, with no comment: no pattern to try
            in_force.append(current)
            continue
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


#: Names FX prints for a constant value, which are no input or node: `x[(Ellipsis, slice(None, 2))]`
#: (vLLM's graphs, tlparse's upstream traces), `float('inf')` printed as `inf`.
_VALUE_NAMES = frozenset({"Ellipsis", "inf", "nan"})

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
            if node.id not in _VALUE_NAMES:
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


# -- the common printed form, read line by line ------------------------------------------------
#
# `ast.parse` is most of the cost of reading a graph (~0.6 s of the ~1.1 s the big trace's 174
# graphs took), and nearly every graph torch logs is one class holding only `forward`, one node a
# line: `name: "annotation" = callee(args);  freed = None`. Those are read here with a few
# regexes a line, into the same FxGraph (tests/test_fxgraph.py checks that, graph by graph, on
# every graph of the corpus and of tlparse's traces); anything else (nested classes, an
# `__init__`, a default or `*args` in the signature, a `;` or `#` inside a value, a line this
# reader does not know) is left to the ast reader above, as is a value that is no call, name or
# attribute (an operator or subscript written inline), statement by statement.

_ASSIGN = re.compile(r'([A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*\s*,?)\s*(?::\s*"([^"]*)")?\s*=(?!=)\s*(.*)')
_CALL = re.compile(r"([A-Za-z_][\w.]*)\((.*)\)")
_NAME = re.compile(r"[A-Za-z_]\w*")
_SELF_ATTR = re.compile(r"self\.[A-Za-z_][\w.]*")
#: A name in a value: what follows it says whether it is read (see `_line_references`).
_WORD = re.compile(r"(?<![\w.])([A-Za-z_]\w*)(\s*(?:\(|\.|=(?!=))?)")
_STRING = re.compile(r"'[^'\\]*'|\"[^\"\\]*\"")
_PARAM = re.compile(r'([A-Za-z_]\w*)\s*(?::\s*"([^"]*)")?\s*(?:,|$)')
_PARAMS = re.compile(r'\s*self\s*(?:,\s*[A-Za-z_]\w*\s*(?::\s*"[^"]*")?\s*)*,?\s*')
_CONSTANTS = frozenset({"None", "True", "False"}) | _VALUE_NAMES
_ANNOTATION_ONLY = re.compile(r'[A-Za-z_]\w*\s*:\s*"[^"]*"\s*(?:#.*)?')


def _line_references(text: str) -> list[str]:
    """Names read in a value, as `_references` finds them in its ast: not a callee, a keyword's
    name, a module's path (`torch.float32`) or `self.x`; a method's receiver is read."""
    if "'" in text or '"' in text:
        text = _STRING.sub("''", text)
    # Most names are followed by nothing `_WORD` takes (`,`, `)`): read, unless a constant.
    return [w for w, after in _WORD.findall(text) if (not after or _read_before(w, after)) and w not in _CONSTANTS]


def _read_before(word: str, after: str) -> bool:
    """Whether `word`, followed by `after` (spaces, then `(`, `.`, `=` or nothing), is read: not a
    callee or keyword's name, not a module's or `self`'s path."""
    follow = after.strip()
    return not follow or (follow == "." and word not in _MODULE_ROOTS and word != "self")


def _line_op(value: str) -> tuple[str, str, list[str]] | None:
    """(op, target, references) of a value of the common forms; None for any other."""
    call = _CALL.fullmatch(value)
    if call is not None:
        callee, inner = call.groups()
        args = _line_references(inner)
        if callee.startswith("self."):
            return "call_module", callee[5:], args
        root, _, attr = callee.partition(".")
        if attr and root not in _MODULE_ROOTS:
            return "call_method", callee.rsplit(".", 1)[1], _line_references(callee.rsplit(".", 1)[0]) + args
        return "call_function", callee, args
    if _NAME.fullmatch(value):
        return ("placeholder_alias", value, [value]) if value not in _CONSTANTS else None
    if _SELF_ATTR.fullmatch(value):
        return "get_attr", value[5:], []
    return None


#: What one assignment line reads as, apart from where it is: (names, op, target, args, meta).
_LineParts = tuple[list[str], str, str, list[str], TensorMeta | None]


def _line_parts(text: str) -> _LineParts | Literal[False] | None:
    """The reading of an assignment line (stripped); None for a line freeing a value; False when
    this reader cannot read the line (the whole graph then goes to the ast reader). A line's
    reading depends on its text alone: `_line_kind` keeps it per distinct line."""
    found = _ASSIGN.fullmatch(text)
    if found is None:
        # `primals_1: "f32[4]"  # PlainAOTInput(idx=0)`: no value, no node (never an `_ASSIGN`).
        return None if _ANNOTATION_ONLY.fullmatch(text) else False
    targets, annotation, value = found.groups()
    if ";" in value or "#" in value:
        # The first `;` or `#` outside a string ends the value (strings masked, their length kept).
        masked = _STRING.sub(lambda m: "x" * len(m.group()), value) if ("'" in value or '"' in value) else value
        semi, hash_ = masked.find(";"), masked.find("#")
        cut = semi if hash_ < 0 or 0 <= semi < hash_ else hash_
        value = value[:cut].rstrip()
    if value == "None":
        return None
    unpack = "," in targets
    names = [t.strip() for t in targets.split(",") if t.strip()] if unpack else [targets.strip()]
    read = _line_op(value) if not unpack else _line_unpack(value)
    if read is None:
        read = _ast_op(value, unpack)
    if read is None:
        return False
    op, target, args = read
    meta = _annotation(annotation) if annotation is not None else None
    return names, op, target, args, meta


@functools.lru_cache(maxsize=4096)
def _annotation(text: str) -> TensorMeta:
    """`parse_annotation`, once per distinct annotation: a graph repeats a few shapes many times.
    TensorMeta is frozen, so nodes may share one (its lists are not to be changed)."""
    return parse_annotation(text)


def _line_unpack(value: str) -> tuple[str, str, list[str]] | None:
    """`a, b, = callee(args)`: unpack, the callee as printed; None for any other value."""
    call = _CALL.fullmatch(value)
    if call is None:
        return None
    read = _line_op(value)
    return ("unpack", call.group(1), read[2]) if read is not None else None


def _ast_op(value: str, unpack: bool) -> tuple[str, str, list[str]] | None:
    """(op, target, references) of a value of another form (an inline operator, a subscript),
    read by `ast` alone; None when it is not one expression."""
    try:
        tree = ast.parse(value, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    target: ast.expr = ast.Tuple(elts=[], ctx=ast.Store()) if unpack else ast.Name(id="_", ctx=ast.Store())
    try:
        op, name = _op(tree, target)
        return op, name, _references(tree)
    except RecursionError:
        return None


def _signature(lines: list[str], start: int) -> tuple[list[StoredInput], dict[str, str], int] | None:
    """The inputs of `def forward(self, ...):` from line `start` on (stored, and the modules of
    those that are parameters or buffers, by name: `_stored_input`), and the line after it."""
    end = start
    while end < len(lines) and not lines[end].rstrip().endswith("):"):
        end += 1
    if end >= len(lines):
        return None
    read = _inputs(" ".join(line.split("#", 1)[0].strip() for line in lines[start : end + 1]))
    return None if read is None else (list(read[0]), dict(read[1]), end + 1)


@functools.lru_cache(maxsize=256)
def _inputs(text: str) -> tuple[tuple[StoredInput, ...], dict[str, str]] | None:
    """`_signature`'s reading of a signature's text, once per distinct text: a model recompiled
    prints the same forward again (88 distinct signatures of the big trace's 174 graphs). The
    caller copies the dict (a node may add to it); StoredInputs are not to be changed."""
    head, _, params = text.partition("(")
    if head.strip() != "def forward" or "*" in params:
        return None
    params = params.strip().removesuffix("):").strip()
    # Only names with a string annotation or none (no default, no `*args`, no other annotation).
    if not _PARAMS.fullmatch(params):
        return None
    stored: list[StoredInput] = []
    module_of: dict[str, str] = {}
    for name, annotation in _PARAM.findall(params)[1:]:
        graph_input, module = _stored_input(name, annotation)
        stored.append(graph_input)
        if module is not None:
            module_of[name] = module
    return tuple(stored), module_of


def _read_lines(text: str) -> FxGraph | None:
    """`_read_stored`'s graph as an FxGraph (tests and tools compare the two readers with it)."""
    stored = _read_stored(text)
    return None if stored is None else from_stored(stored)


def _read_stored(text: str) -> StoredGraph | None:
    """The graph of the common printed form (one class holding only `forward`), read line by
    line straight into its stored form (graphs/<md5>.json's: no FxGraph made, then copied);
    None for any other (the ast reader reads it)."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if _CLASS.match(line)), None)
    if start is None:
        return None
    found = _CLASS.match(lines[start])
    assert found is not None
    indent = len(found.group(1))
    first = next((i for i in range(start + 1, len(lines)) if lines[i].strip()), None)
    if first is None or _indent(lines[first]) <= indent:
        return None
    if lines[first].strip().startswith("def __init__("):  # fx_graph_runnable's Repro: not the graph
        method = _indent(lines[first])
        first = next(
            (i for i in range(first + 1, len(lines)) if lines[i].strip() and _indent(lines[i]) <= method), None
        )
        if first is None or _indent(lines[first]) != method:
            return None
    signature = _signature(lines, first)
    if signature is None:
        return None
    stored_inputs, module_of, at = signature
    body = _Body(module_of, _mark_before(lines, at))
    if not body.read(lines, at, _indent(lines[first])):
        return None
    if not body.exact:
        body.fill_users()
    return StoredGraph(
        name=found.group(2), inputs=stored_inputs, nodes=body.nodes, outputs=body.outputs, sources=list(body.sources)
    )


@functools.lru_cache(maxsize=4096)
def _stored_input(name: str, annotation: str) -> tuple[StoredInput, str | None]:
    """An input in its stored form, with its module when its name says it (`_fill_modules`), once
    per distinct (name, annotation): signatures that differ still share most of their inputs."""
    module = module_of_name(name)
    return StoredInput(name=name, meta=_annotation(annotation) if annotation else None, module=module), module


def _mark_before(lines: list[str], at: int) -> FxSource | None:
    """The user line in force at line `at` (as `_sources` says), from the lines before it."""
    current: FxSource | None = None
    for line in lines[:at]:
        if line.lstrip().startswith("#"):  # a comment line (a signature's `# PlainAOTInput` is no mark)
            kind = _line_kind(line)
            if kind[0] == _MARK:
                current = kind[2]
    return current


# What a raw line of forward's body is (`_line_kind`): blank or a comment that changes nothing, a
# `# File:` comment (or `# No stacktrace found`) setting the user line in force, `return ...`,
# an assignment making a node, one making none (`x = None`, an annotation alone), or a line
# this reader cannot read.
_SKIP, _MARK, _RETURN, _NODE, _NONE, _FAIL = range(6)

#: A raw line's kind, by its text: (kind, indent, ...): for _MARK the FxSource (or None); for
#: _RETURN the stripped text; for _NODE name, names, op, target, args, meta, the distinct args
#: and how many names past the first. Blank and comment lines, whatever their indent, are
#: `_DEEP`: deeper than any statement (they neither end the body nor are read as one).
#: The lists are shared by every node of that text (a node's are not to be changed; `from_stored`
#: copies them). Cleared when full (`_LINES_MAX`): the big trace's 174 graphs are ~7k distinct lines.
_LINES: dict[str, tuple[Any, ...]] = {}
_LINES_MAX = 1 << 14
_DEEP = sys.maxsize


def _line_kind(line: str) -> tuple[Any, ...]:
    """What raw line `line` is (see `_LINES`), read once per distinct text."""
    kind = _LINES.get(line)
    if kind is not None:
        return kind
    lead = line.lstrip()
    if not lead:
        kind = (_SKIP, _DEEP)
    elif lead[0] == "#":
        found = _FILE.match(line)
        if found is not None:
            path, at, function, code = found.groups()
            kind = (_MARK, _DEEP, FxSource(file=path, line=int(at), function=function, code=code))
        else:
            kind = (_MARK, _DEEP, None) if _NO_STACK.match(line) else (_SKIP, _DEEP)
    else:
        kind = _statement_kind(lead.rstrip(), len(line) - len(lead))
    if len(_LINES) >= _LINES_MAX:
        _LINES.clear()
    _LINES[line] = kind
    return kind


def _statement_kind(stripped: str, indent: int) -> tuple[Any, ...]:
    if stripped.startswith("return ") or stripped == "return":
        return (_RETURN, indent, stripped)
    parts = _line_parts(stripped)
    if parts is None:
        return (_NONE, indent)
    if parts is False:
        return (_FAIL, indent)
    names, op, target, args, meta = parts
    distinct = tuple(dict.fromkeys(args))
    return (_NODE, indent, names[0], names, op, target, args, meta, distinct, len(names) - 1)


class _Body:
    """`forward`'s body read into stored nodes in one pass: each node's user line (an index into
    `sources`, in order of first use), its users and its module are filled as it is read (what
    `_fill_users`, `_fill_modules` and `to_stored` do over a whole FxGraph, the same result)."""

    def __init__(self, module_of: dict[str, str], current: FxSource | None) -> None:
        self.nodes: list[StoredNode] = []
        self.outputs: list[str] = []
        self.sources: dict[FxSource, int] = {}
        self.module_of = module_of
        self.current = current
        #: Whether the users filled in `read`'s one pass are what `_fill_users` gives.
        self.exact = True

    def read(self, lines: list[str], at: int, method: int) -> bool:
        """Read lines `at`.. deeper than `method` (the indent of `def forward`); False at anything
        this reader does not know."""
        nodes, sources, module_of, kinds = self.nodes, self.sources, self.module_of, _LINES
        producers: dict[str, StoredNode] = {}
        unresolved: set[str] = set()
        extra = 0  # names assigned beyond a node's first (a tuple unpack's)
        current, index = self.current, None
        for number, line in enumerate(lines[at:], at + 1):
            kind = kinds.get(line) or _line_kind(line)
            if kind[1] <= method:  # a statement there (blank and comment lines are never)
                # Another member of the class (a nested graph, a method): the ast reader's; past the class: the end.
                if kind[1] == method:
                    return False
                break
            tag = kind[0]
            if tag == _NODE:
                _, _, name, names, op, target, args, meta, distinct, more = kind
                if current is not None and index is None:
                    index = sources.setdefault(current, len(sources))
                module = None
                if module_of and not module_of.keys().isdisjoint(args):
                    module = _module_read(module_of, args, name, op)
                # Positional (the fields' order), a keyword call costs more: ~32k nodes on the big trace.
                node = StoredNode(name, names, op, target, args, [], meta, index, module, number)
                for arg in distinct:
                    producer = producers.get(arg)
                    if producer is not None:
                        producer.users.append(name)
                    else:
                        unresolved.add(arg)
                if more:
                    extra += more
                    producers.update(dict.fromkeys(names, node))
                else:
                    producers[name] = node
                nodes.append(node)
            elif tag == _MARK:
                current, index = kind[2], None
            elif tag == _RETURN:
                self.outputs, after = _outputs(lines, number, kind[2])
                if not _ends(lines, after, method):
                    return False  # a statement after `return`
                break
            elif tag == _FAIL:
                return False
        # Users filled in the one pass are `_fill_users`' when no name is assigned twice and none
        # is read before a node assigns it (else `fill_users` does it again).
        self.exact = len(producers) == len(nodes) + extra and unresolved.isdisjoint(producers)
        return True

    def fill_users(self) -> None:
        """Users as `_fill_users` fills them (a name assigned twice, or read before it is)."""
        by_name = {name: node for node in self.nodes for name in node.names}
        for node in self.nodes:
            node.users = []
        for node in self.nodes:
            for arg in dict.fromkeys(node.args):
                producer = by_name.get(arg)
                if producer is not None and producer is not node:
                    producer.users.append(node.name)


def _module_read(module_of: dict[str, str], args: list[str], name: str, op: str) -> str | None:
    """The one module whose parameters or buffers a node reads (`_fill_modules`), or None; an
    alias of one is that module's too."""
    read = {module_of[arg] for arg in args if arg in module_of}
    if len(read) != 1:
        return None
    module = read.pop()
    if op == "placeholder_alias":
        module_of[name] = module
    return module


def _ends(lines: list[str], at: int, method: int) -> bool:
    """Whether the body ends at line `at` (after its `return`): the next statement, if any, is
    past the class (indented less than `def forward`)."""
    for line in lines[at:]:
        lead = line.lstrip()
        if lead and lead[0] != "#":
            return len(line) - len(lead) < method
    return True


def _outputs(lines: list[str], number: int, stripped: str) -> tuple[list[str], int]:
    """The names `return` reads, and the line after it: a tuple return spreads over lines (AOT
    graphs: one a line), read while parentheses are open."""
    parts = [stripped[6:].split("#", 1)[0]]
    depth = parts[0].count("(") - parts[0].count(")")
    while depth > 0 and number < len(lines):
        parts.append(lines[number].split("#", 1)[0])
        depth += parts[-1].count("(") - parts[-1].count(")")
        number += 1
    return list(_return_references(" ".join(parts))), number


@functools.lru_cache(maxsize=256)
def _return_references(text: str) -> tuple[str, ...]:
    """`_line_references` of a return's text, once per distinct text: the big trace's 174 graphs
    return 32 distinct tuples (AOT graphs' are hundreds of names)."""
    return tuple(_line_references(text))
