"""A compiled module's repeated blocks, from its guards, and the fix that compiles one of them
instead of the whole (torch's regional compilation).

A model of N identical blocks (a transformer's layers, a residual stack) compiled whole is traced
into one graph N blocks long, and Inductor generates and compiles code for every copy: its compile
time grows with N. Compiling each block instead (`block.compile()`), Dynamo compiles the block's
code once and every other instance reuses it (same code, same guards): on torch 2.13, 12 layers of
a small transformer took 27.5 s whole and 13.5 s as blocks (one compile); 30 residual blocks 20.8
s and 10.1 s (two compiles: the first block's input needs no grad); the whole's time grows with
the blocks, the blocks' does not. What it costs is fusion across the blocks' edges and a guarded
call per block (a step of those toy CPU models ran 30-40 % slower).

Dynamo's C++ guard tree names every module the compile read with its class
(`source=L['self']._modules['layers']._modules['3'], ... type=<class '__main__.Layer'>`): siblings
of one class in one container are the blocks.
"""

from __future__ import annotations

import re

import msgspec

from tlscope.analyse.phase_words import SLOW_S
from tlscope.format.compiles import Fix, SourceLocation

#: Fewer blocks than this are left alone: with 2 or 3 the one compile that is left costs most of
#: what the whole did (4 layers: 19 s whole, 14 s as blocks).
MIN_BLOCKS = 4
#: torch's recipe, which the fix's why cites.
RECIPE = "https://docs.pytorch.org/tutorials/recipes/regional_compilation.html"

#: A guard tree manager of a submodule of the compiled module (`L['self']`, or the `fn` torch's
#: wrapper compiled); its class follows on its line, after a short accessor
#: (`accessed_by=DictGetItemGuardAccessor('norm'), type=<class '…'>`), looked for within
#: CLASS_WITHIN characters: a hostile line of managers that never reach `type=` is read in linear time.
_MANAGER = r"source=(L\['(?:self|fn)'\](?:\._modules\['[^'\n]+'\])*), "
CLASS_WITHIN = 300
_CLASS = "type=<class '"
#: Containers a `for` loop walks module by module (torch.nn's; a ModuleDict walks its keys).
_ITERABLE = ("torch.nn.modules.container.Sequential", "torch.nn.modules.container.ModuleList")
_DICT = "torch.nn.modules.container.ModuleDict"
_KEY = r"\._modules\['([^'\n]+)'\]"
# The patterns are compiled by `re` when first used (its cache): most compiles guard no module's
# submodules, and a small log's run should not pay ~0.3 ms to compile them.


class Blocks(msgspec.Struct, frozen=True, kw_only=True):
    """The outermost group of sibling submodules of one class that have submodules of their own."""

    #: The container as Dynamo names it (`L['self']._modules['layers']`, `L['fn']`).
    container: str
    #: The blocks' class, without its module path (`Layer`).
    cls: str
    #: How many blocks: the sibling modules of that class the compile read.
    copies: int
    #: The container's class as the guards name it (`torch.nn.modules.container.ModuleList`, a
    #: user's module that holds the blocks as attributes), "" when they do not say.
    holder: str = ""
    #: The blocks' names in the container (`0`, `1`…; `enc1`, `enc2`…), in order.
    keys: tuple[str, ...] = ()


def repeated_blocks(text: str) -> Blocks | None:
    """The compiled module's repeated blocks in a guards payload, or None when it has fewer than
    MIN_BLOCKS siblings of one class with submodules of their own (a Sequential of Linears is
    one op each: nothing a block's compile would reuse). The outermost such group is the blocks:
    compiling each layer compiles the heads inside it too."""
    if "._modules['" not in text:
        return None
    groups: dict[tuple[str, str], set[str]] = {}
    parents: set[str] = set()
    classes: dict[str, str] = {}
    for found in re.finditer(_MANAGER, text):
        source, cls = found[1], _class_after(text, found.end())
        if cls is None:
            continue
        classes.setdefault(source, cls)
        parent, _, key = source.rpartition("._modules['")
        if parent:
            parents.add(parent)
            groups.setdefault((parent, cls), set()).add(key[:-2])
    # The outermost repetition (a transformer's layers, not the heads inside each layer, however
    # many), the most blocks among equals (the first met among those).
    candidates = [
        (parent.count("._modules['"), -len(keys), parent, cls, keys)
        for (parent, cls), keys in groups.items()
        if len(keys) >= MIN_BLOCKS and any(f"{parent}._modules['{key}']" in parents for key in keys)
    ]
    if not candidates:
        return None
    _, _, parent, cls, keys = min(candidates, key=lambda group: group[:2])
    ordered = tuple(sorted(keys, key=lambda k: (not k.isdigit(), int(k) if k.isdigit() else 0, k)))
    return Blocks(
        container=parent, cls=cls.rpartition(".")[2], copies=len(keys), holder=classes.get(parent, ""), keys=ordered
    )


def _class_after(text: str, at: int) -> str | None:
    """The class a manager's line names after `at` (`__main__.Layer` of `type=<class
    '__main__.Layer'>`), within CLASS_WITHIN characters and its line; None when it names none."""
    end = text.find("\n", at, at + CLASS_WITHIN)
    start = text.find(_CLASS, at, end if end >= 0 else at + CLASS_WITHIN)
    if start < 0:
        return None
    start += len(_CLASS)
    close = text.find("'", start, start + CLASS_WITHIN)
    found = text[start:close] if close >= 0 else ""
    return found if found and all(part.isidentifier() for part in found.split(".")) else None


def said_container(container: str) -> str:
    """The container as the user's code reaches it from the compiled module (`model`):
    `model.layers`, `model.encoder[0].blocks`, `model` itself."""
    said = "model"
    for key in re.findall(_KEY, container):
        said += f"[{key}]" if key.isdigit() else f".{key}"
    return said


def time_fix(
    blocks: Blocks | None, seconds: float | None, compiled: str | None, where: SourceLocation | None
) -> Fix | None:
    """A compile's `time_fix`: compile each block instead of the module (`compiled`: its class,
    `Model`), for a compile of SLOW_S seconds or more (`seconds`, its backward's counted) whose
    module has repeated blocks; None otherwise (a fast compile has no time to win back)."""
    if blocks is None or seconds is None or seconds < SLOW_S:
        return None
    return regional_fix(blocks, compiled, where)


def loop_code(blocks: Blocks) -> str:
    """The line that compiles each block: a loop over a Sequential or ModuleList as torch's recipe
    writes it, over a ModuleDict's values, else over the attributes that hold the blocks."""
    loop = said_container(blocks.container)
    if blocks.holder in _ITERABLE:
        return f"for block in {loop}: block.compile()"
    if blocks.holder == _DICT:
        return f"for block in {loop}.values(): block.compile()"
    named = ", ".join(f"{loop}[{k}]" if k.isdigit() else f"{loop}.{k}" for k in blocks.keys)
    return f"for block in ({named}): block.compile()"


def regional_fix(blocks: Blocks, compiled: str | None, where: SourceLocation | None) -> Fix:
    """Compile each block instead of the module (`compiled`: its class, `Model`)."""
    loop = said_container(blocks.container)
    model = f"the {compiled}" if compiled else "the module"
    others = blocks.copies - 1
    why = (
        f"{model[0].upper()}{model[1:]} was compiled whole: its {blocks.copies} {blocks.cls} modules are one "
        f"graph, and Inductor generates and compiles code for each copy. Compiling each block instead of "
        f"{model} (torch's regional compilation; `model` is {model} you passed to torch.compile), "
        f"{blocks.cls} is compiled once and the {others} other{'s' if others != 1 else ''} reuse it; "
        f"what it costs is fusion across the blocks' edges. {RECIPE}"
    )
    return Fix(
        kind="regional",
        input=loop,
        source=blocks.container,
        code=loop_code(blocks),
        where=where,
        why=why,
    )
