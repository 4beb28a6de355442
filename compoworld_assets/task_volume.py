"""How many task walks a round samples when none is given: one definition for ``TaskRoundConfig`` and the
command line's help (a module without Dagster, so ``compoworld --help`` stays fast).

The volume grows with the library: ``max(MIN_PLANS, ceil(PLANS_PER_SERVICE * services))``. Measured at
paper scale (465 services, docs/scaling.md), 13 walks per service gave 5,654 tasks: 2,896 verified SFT
trajectories, short of the paper's 3K, and 1,291 RL tasks; 15 give ~3.2K and ~1.4K at 448 services.
"""

import math

MIN_PLANS = 1100
PLANS_PER_SERVICE = 15.0


def default_plan_count(n_services: int, plans_per_service: float = PLANS_PER_SERVICE) -> int:
    return max(MIN_PLANS, math.ceil(plans_per_service * n_services))


def services_before_growth(plans_per_service: float = PLANS_PER_SERVICE) -> int:
    """The largest library that still gets ``MIN_PLANS`` walks."""
    return math.floor(MIN_PLANS / plans_per_service)
