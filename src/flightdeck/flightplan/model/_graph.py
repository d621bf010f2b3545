"""The step graph: edges from bindings, cycles, and deterministic order.

Edges run in the direction data flows: `a → b` when step `b` binds an output
of step `a`. Only references to steps that exist make edges; dangling ones are
lint's business, not the graph's.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Protocol


# What the graph reads of a plan (`_models.FlightPlan`, which builds its graph
# once and so imports this module): the steps, their ids and dependencies.
class _Step(Protocol):
    @property
    def id(self) -> str: ...

    def dependencies(self) -> tuple[str, ...]: ...


class _Plan(Protocol):
    @property
    def steps(self) -> Sequence[_Step]: ...


@dataclass(frozen=True)
class StepGraph:
    """Immutable all the way down (tuples and a read-only mapping): the
    parse cache hands the same graph to every launch of the same bytes."""

    order: tuple[str, ...]  # step ids in declaration order (first of duplicates wins)
    successors: Mapping[str, tuple[str, ...]]

    @classmethod
    def of(cls, plan: _Plan) -> StepGraph:
        # dict.fromkeys keeps the first of duplicates, in declaration order,
        # without the quadratic `not in list` scan.
        order = list(dict.fromkeys(step.id for step in plan.steps))
        succ: dict[str, list[str]] = {step_id: [] for step_id in order}
        for step in plan.steps:
            for dep in step.dependencies():
                if dep in succ and step.id not in succ[dep]:
                    succ[dep].append(step.id)
        successors = {key: tuple(value) for key, value in succ.items()}
        return cls(tuple(order), MappingProxyType(successors))

    def cycles(self) -> list[tuple[str, ...]]:
        """One cycle per strongly connected component, as `(a, b, c, a)`,
        starting at the component's earliest-declared step."""
        found = []
        rank = {step_id: index for index, step_id in enumerate(self.order)}
        for component in self._components():
            members = set(component)
            start = min(component, key=rank.__getitem__)
            if len(component) == 1 and start not in self.successors[start]:
                continue
            path = self._cycle_from(start, members)
            if path:
                found.append((*path, start))
        found.sort(key=lambda cycle: rank[cycle[0]])
        return found

    def topological_order(self) -> tuple[str, ...]:
        """Kahn's algorithm, ties broken by declaration order. Raises
        `ValueError` on a cycle (lint reports cycles before anyone asks)."""
        rank = {step_id: index for index, step_id in enumerate(self.order)}
        indegree = dict.fromkeys(self.order, 0)
        for targets in self.successors.values():
            for target in targets:
                indegree[target] += 1
        ready = [(rank[s], s) for s, degree in indegree.items() if degree == 0]
        heapq.heapify(ready)
        out: list[str] = []
        while ready:
            _, step_id = heapq.heappop(ready)
            out.append(step_id)
            for target in self.successors[step_id]:
                indegree[target] -= 1
                if indegree[target] == 0:
                    heapq.heappush(ready, (rank[target], target))
        if len(out) != len(self.order):
            raise ValueError("the step graph has a cycle")
        return tuple(out)

    def _cycle_from(self, start: str, members: set[str]) -> list[str]:
        # Depth-first search for a path back to `start`, staying inside the
        # component, visiting successors in declaration order (deterministic).
        stack: list[tuple[str, int]] = [(start, 0)]
        path = [start]
        visited = {start}
        while stack:
            node, next_index = stack[-1]
            targets = self.successors[node]
            if next_index >= len(targets):
                stack.pop()
                path.pop()
                continue
            stack[-1] = (node, next_index + 1)
            target = targets[next_index]
            if target == start:
                return list(path)
            if target in members and target not in visited:
                visited.add(target)
                stack.append((target, 0))
                path.append(target)
        return []

    def _components(self) -> list[list[str]]:
        # Tarjan's algorithm, iterative (a 500-step chain must not hit the
        # recursion limit).
        index: dict[str, int] = {}
        low: dict[str, int] = {}
        on_stack: set[str] = set()
        stack: list[str] = []
        components: list[list[str]] = []
        counter = 0
        for root in self.order:
            if root in index:
                continue
            work: list[tuple[str, int]] = [(root, 0)]
            while work:
                node, position = work[-1]
                if position == 0 and node not in index:
                    index[node] = low[node] = counter
                    counter += 1
                    stack.append(node)
                    on_stack.add(node)
                targets = self.successors[node]
                if position < len(targets):
                    work[-1] = (node, position + 1)
                    target = targets[position]
                    if target not in index:
                        work.append((target, 0))
                    elif target in on_stack:
                        low[node] = min(low[node], index[target])
                    continue
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    components.append(component)
        return components


def format_cycle(cycle: tuple[str, ...]) -> str:
    return " → ".join(cycle)
