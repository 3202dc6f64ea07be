"""The tree of an `nvidia-smi -q` text, and its shape: a fragment without its GPU header, a
report cut off.

The lines are read into a tree by indentation (`build_tree`; any width, tabs allowed), so a
label is found by its place however wide the label column is. A line may hold a value and
still have children ("HW Slowdown : Not Active" with "HW Thermal Slowdown" under it). Labels
repeat ("MIG Device", "Process ID"), so children are kept in order as a list.

A fragment is what people paste into a ticket: one or more of a GPU block's sections ("ECC
Errors", "Remapped Rows", ...) without the "GPU 00000000:3B:00.0" line above them, often from
`nvidia-smi -q | grep -A 8 "Remapped Rows"` (whose "--" lines part the matches). Every
top-level label must be one a GPU block holds and one of them a section with lines under it.
A label that comes again starts the next GPU: on a node of several GPUs, grep finds the same
section once per GPU, and which GPU each is cannot be told.

A cut-off report (a paste or a file that ends mid-way) is told from one narrowed with `-i`
by its shape, not by the number of GPUs alone: a narrowed report lists fewer GPUs than
"Attached GPUs" but each GPU block ends as the others do; a cut one stops inside its last GPU
block. The last block is complete when it ends as the block before it does (the same sections
in the same order, the last one as long); with one block, or blocks that differ, a block of a
full report (it opens with "Product Name") is complete once it reaches "Processes", which every
driver prints near the end of every GPU block. A report filtered with `-d` holds neither, and
is taken as complete.
"""

from collections.abc import Iterable
from dataclasses import dataclass, field

from . import values as v

# The labels at the top of a GPU block, as drivers from R450 to R610 print them.
GPU_BLOCK_LABELS = frozenset(
    """
    product name|product brand|product architecture|display mode|display attached|display active
    |persistence mode|addressing mode|mig mode|mig devices|mig device|accounting mode
    |accounting mode buffer size|driver model|serial number|gpu uuid|gpu pdi|minor number
    |vbios version|multigpu board|board id|board part number|gpu part number|fru part number
    |module id|platform info|inforom version|inforom bbx object flush|gpu operation mode
    |gpu c2c mode|gpu virtualization mode|gpu reset status|gpu recovery action
    |gsp firmware version|ibmnpu|pci|fan speed|performance state|clocks event reasons
    |clocks throttle reasons|clocks event reasons counters|sparse operation mode
    |fb memory usage|bar1 memory usage|conf compute protected memory usage|compute mode
    |utilization|encoder stats|fbc stats|dram encryption mode|ecc mode|ecc errors
    |retired pages|remapped rows|temperature|gpu power readings|power readings
    |gpu memory power readings|module power readings|power smoothing|workload power profiles
    |clocks|applications clocks|default applications clocks|deferred clocks|max clocks
    |max customer boost clocks|clock policy|voltage|fabric|processes|accounted processes
    |capabilities|edpp multiplier
    """.replace("\n", "")
    .replace("    ", "")
    .split("|")
)
# grep's line between the groups it prints with -A/-B/-C.
GREP_SEPARATOR = "--"


@dataclass
class Node:
    """One line of the tree: its label (lower-case, single spaces) as written (`text`), its
    value and children."""

    label: str
    value: str | None = None
    children: list["Node"] = field(default_factory=list)
    text: str = ""

    def get(self, *labels: str) -> "Node | None":
        """The first child with this label, then its first child with the next, and so on."""
        node: Node | None = self
        for label in labels:
            if node is None:
                return None
            node = next((child for child in node.children if child.label == label), None)
        return node

    def value_of(self, *labels: str) -> str | None:
        node = self.get(*labels)
        return None if node is None else node.value

    def first(self, *paths: tuple[str, ...]) -> str | None:
        """The first of several label paths that holds a known value (renamed labels)."""
        for path in paths:
            value = self.value_of(*path)
            if v.known(value) is not None:
                return value
        return None


def label_of(text: str) -> str:
    return " ".join(text.lower().split())


def split_line(line: str) -> tuple[str, str] | None:
    """(label, value) at the first colon followed by a blank or the end of the line.

    A colon inside a word does not split: "GPU 00000000:00:06.0" is a block header.
    """
    start = 0
    while True:
        colon = line.find(":", start)
        if colon < 0:
            return None
        if colon + 1 == len(line) or line[colon + 1] in " \t":
            return line[:colon].strip(), line[colon + 1 :].strip()
        start = colon + 1


def build_tree(text: str) -> Node:
    """The lines of `text` as a tree by indentation."""
    root = Node(label="", children=[])
    stack: list[tuple[int, Node]] = [(-1, root)]
    for raw in text.split("\n"):
        line = raw.expandtabs(4)
        stripped = line.strip()
        if not stripped or stripped == GREP_SEPARATOR:
            continue  # grep's separator stands at the left edge, between the GPUs' sections
        indent = len(line) - len(line.lstrip())
        pair = split_line(stripped)
        if pair is None or not pair[0]:
            node = Node(label=label_of(stripped), text=stripped)
        else:
            node = Node(label=label_of(pair[0]), value=pair[1], text=pair[0])
        while stack[-1][0] >= indent:
            stack.pop()
        stack[-1][1].children.append(node)
        stack.append((indent, node))
    return root


def fragment_groups(nodes: Iterable[Node]) -> list[list[Node]] | None:
    """The top-level lines of a header-less fragment, one list per GPU; None when the lines
    are not such a fragment (see the module docstring)."""
    groups: list[list[Node]] = [[]]
    section = False
    for node in nodes:
        if node.label not in GPU_BLOCK_LABELS:
            return None
        section = section or any(child.value is not None for child in node.children)
        if any(seen.label == node.label for seen in groups[-1]):
            groups.append([])
        groups[-1].append(node)
    if not section or not groups[0]:
        return None
    return groups


def _outline(node: Node) -> list[tuple[int, str]]:
    """(depth, label) of every line under a section, the listed processes left out."""
    lines: list[tuple[int, str]] = []
    pending: list[tuple[int, Node]] = [(1, child) for child in reversed(node.children)]
    while pending:
        depth, child = pending.pop()
        lines.append((depth, child.label))
        if node.label != "processes":
            pending.extend((depth + 1, grand) for grand in reversed(child.children))
    return lines


def _proper_prefix[T](short: list[T], long: list[T]) -> bool:
    return len(short) < len(long) and long[: len(short)] == short


def cut_inside(blocks: list[Node]) -> bool | None:
    """Whether the report's last GPU block stops short (True), ends normally (False), or its
    shape cannot tell (None: a report filtered with -d)."""
    if not blocks:
        return None
    last = blocks[-1]
    labels = [child.label for child in last.children]
    if len(blocks) >= 2:
        previous = blocks[-2]
        before = [child.label for child in previous.children]
        if labels == before:
            if not last.children:
                return False
            mine, theirs = _outline(last.children[-1]), _outline(previous.children[-1])
            if mine == theirs or last.children[-1].label == "processes":
                return False
            if _proper_prefix(mine, theirs):
                return True
        elif _proper_prefix(labels, before):
            return True
    if not labels or labels[0] != "product name":
        return None
    return "processes" not in labels


def stop_point(block: Node) -> str:
    """Where a cut-off GPU block stops: its last section and the last line read in it
    ("ECC Errors > Aggregate > DRAM Correctable"), as the report writes them."""
    path: list[str] = []
    node = block
    while node.children and len(path) < 4:
        node = node.children[-1]
        path.append(node.text or node.label)
    return " > ".join(path)
