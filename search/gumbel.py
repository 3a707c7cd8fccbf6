"""Sequential halving schedule of the Gumbel root (Danihelka et al., ICLR 2022, section 4).

With m considered actions and a budget of n simulations, sequential halving runs
ceil(log2 m) phases; in each phase every surviving action gets
max(1, floor(n / (ceil(log2 m) * survivors))) more visits, then the better half
(by g + logit + sigma(completed Q)) survives, never fewer than two. The search
expresses the schedule as a table: simulation i may only visit a root action
whose visit count equals table[m, i]; among those it takes the best score. The
first m simulations (target 0) therefore visit the Gumbel-top-m actions, and
each later target singles out the survivors of the current phase.
"""

from __future__ import annotations

import math

import numpy as np


def considered_visits(num_considered: int, num_simulations: int) -> list[int]:
    """Visit count that simulation i requires of the root action it visits, for i < n."""
    if num_considered <= 1:
        # One candidate: it takes every simulation.
        return list(range(num_simulations))
    phases = math.ceil(math.log2(num_considered))
    schedule: list[int] = []
    survivors = num_considered
    visits = 0  # visits each survivor has at the start of a round
    while len(schedule) < num_simulations:
        rounds = max(1, num_simulations // (phases * survivors))
        for _ in range(rounds):
            schedule.extend([visits] * survivors)
            visits += 1
        survivors = max(2, survivors // 2)
    return schedule[:num_simulations]


def considered_visits_table(max_considered: int, num_simulations: int) -> np.ndarray:
    """int32 [max_considered + 1, n]: row k is the schedule for k considered actions (row 0 unused).

    The root considers min(max_considered, legal actions) actions, so one table serves every position.
    """
    table = np.zeros((max_considered + 1, num_simulations), dtype=np.int32)
    for k in range(1, max_considered + 1):
        table[k] = considered_visits(k, num_simulations)
    return table
