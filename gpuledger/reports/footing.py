"""Rounding to cents so that every table foots as printed (decision 0010).

A table's total is its exact total rounded half away from zero to cents. Its components get the cents of that
total by largest remainder: each is rounded down, then the cents still missing go one each to the components
with the largest remainders (ties: the one listed first). So the printed components add up exactly to the
printed total, and each is within a cent of its exact value.

A table that adds up both ways (a team's categories per source currency, all converted to the reporting
currency) is rounded as one grid: every cell, row total and column total is its exact value rounded down or up,
rows and columns add up exactly, the grand total is the one given, and among such roundings the one closest to
the exact figures (least total rounding error) is chosen: a small minimum-cost flow, one unit per cent.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import ROUND_FLOOR, ROUND_HALF_UP, Decimal

from models.errors import GpuledgerError

CENT = Decimal("0.01")
_ONE = Decimal(1)
_MANDATORY = Decimal(10**6)
"""Cost of leaving a cent a row or column must have: larger than any sum of rounding errors of a table."""


def rounded(value: Decimal) -> Decimal:
    """``value`` rounded half away from zero to cents: how a total is printed."""
    return value.quantize(CENT, ROUND_HALF_UP)


def allocate(parts: Sequence[Decimal], total: Decimal, *, unit: Decimal = CENT) -> list[Decimal]:
    """``parts`` rounded to ``unit`` by largest remainder so that they add up to ``total`` (a multiple of ``unit``)."""
    scaled = [part / unit for part in parts]
    floors = [value.to_integral_value(ROUND_FLOOR) for value in scaled]
    missing = int(total / unit - sum(floors, Decimal(0)))
    # largest remainder first; the rare surplus (a stored total a hair off its parts) leaves the smallest first
    order = sorted(range(len(parts)), key=lambda i: (floors[i] - scaled[i], i))
    step = 1 if missing > 0 else -1
    for n in range(abs(missing)):
        position = order[n % len(order)] if step > 0 else order[-1 - n % len(order)]
        floors[position] += step
    return [(value * unit).quantize(unit) for value in floors]


def allocate_total(parts: Sequence[Decimal], total: Decimal) -> tuple[list[Decimal], Decimal]:
    """The printed components of exact ``parts`` with exact ``total``, and the printed total."""
    shown = rounded(total)
    return allocate(parts, shown), shown


@dataclass(frozen=True)
class Grid:
    """A table rounded to cents that adds up both ways."""

    cells: list[list[Decimal]]
    row_totals: list[Decimal]
    column_totals: list[Decimal]
    total: Decimal


def foot_grid(cells: Sequence[Sequence[Decimal]], total: Decimal) -> Grid:
    """Exact ``cells`` (rows x columns) rounded to cents, adding up across and down to ``total`` (the exact sum
    of the cells rounded down or up to cents)."""
    rows, columns = len(cells), len(cells[0])
    scaled = [[value / CENT for value in row] for row in cells]
    floors = [[value.to_integral_value(ROUND_FLOOR) for value in row] for row in scaled]
    network = _Network(rows + columns + 2)
    source, sink = 0, rows + columns + 1
    mandatory = []
    for margin, node, exact, base in [
        *[(True, 1 + i, sum(scaled[i], Decimal(0)), sum(floors[i], Decimal(0))) for i in range(rows)],
        *[
            (False, 1 + rows + j, sum((r[j] for r in scaled), Decimal(0)), sum((f[j] for f in floors), Decimal(0)))
            for j in range(columns)
        ],
    ]:
        low = exact.to_integral_value(ROUND_FLOOR)
        start, end = (source, node) if margin else (node, sink)
        if low > base:  # cents this row or column must get to be its exact total rounded down
            mandatory.append(network.add(start, end, int(low - base), -_MANDATORY))
        if exact != low:
            network.add(start, end, 1, _ONE - 2 * (exact - low))
    for i in range(rows):
        for j in range(columns):
            remainder = scaled[i][j] - floors[i][j]
            if remainder:
                network.add(1 + i, 1 + rows + j, 1, _ONE - 2 * remainder)
    for _ in range(int(total / CENT - sum((sum(row, Decimal(0)) for row in floors), Decimal(0)))):
        if not network.augment(source, sink):
            raise GpuledgerError(f"cannot round a table to a total of {total}")
    if any(network.residual(edge) for edge in mandatory):
        raise GpuledgerError(f"cannot round a table to a total of {total}")
    result = [
        [(floors[i][j] + network.flow_between(1 + i, 1 + rows + j)) * CENT for j in range(columns)] for i in range(rows)
    ]
    return Grid(
        cells=result,
        row_totals=[sum(row, Decimal(0)) for row in result],
        column_totals=[sum((row[j] for row in result), Decimal(0)) for j in range(columns)],
        total=total,
    )


@dataclass
class _Edge:
    start: int
    end: int
    capacity: int
    cost: Decimal
    left: int = 0


class _Network:
    """A residual graph for successive shortest paths (Bellman-Ford: costs are negative, the graph is tiny)."""

    def __init__(self, nodes: int) -> None:
        self.nodes = nodes
        self.edges: list[_Edge] = []  # edge e ^ 1 is the reverse of edge e

    def add(self, start: int, end: int, capacity: int, cost: Decimal) -> int:
        self.edges.append(_Edge(start, end, capacity, cost, capacity))
        self.edges.append(_Edge(end, start, 0, -cost))
        return len(self.edges) - 2

    def residual(self, edge: int) -> int:
        return self.edges[edge].left

    def flow_between(self, start: int, end: int) -> int:
        return sum(e.capacity - e.left for e in self.edges[::2] if (e.start, e.end) == (start, end))

    def augment(self, source: int, sink: int) -> bool:
        """Send one unit along the cheapest path; False when none is left."""
        distance: list[Decimal | None] = [None] * self.nodes
        via: list[int] = [-1] * self.nodes
        distance[source] = Decimal(0)
        for _ in range(self.nodes):
            changed = False
            for number, edge in enumerate(self.edges):
                reached, known = distance[edge.start], distance[edge.end]
                if edge.left and reached is not None and (known is None or reached + edge.cost < known):
                    distance[edge.end], via[edge.end], changed = reached + edge.cost, number, True
            if not changed:
                break
        if distance[sink] is None:
            return False
        node = sink
        while node != source:
            self.edges[via[node]].left -= 1
            self.edges[via[node] ^ 1].left += 1
            node = self.edges[via[node]].start
        return True
