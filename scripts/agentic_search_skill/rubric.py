"""The seed's relevance rubric: the score thresholds every stage reads, in one place.

Seed 000's scale: 0.8-1.0 implements the target; 0.5-0.7 holds related patterns or
types; 0.2-0.4 is indirectly related; below 0.2 is unrelated and excluded. The loop
reads the context (files to hand to the agent) at HIGH_RELEVANCE and above, the
seed's ``relevance >= 0.7``.

Example::

    >>> band(0.85), band(0.6), band(0.1)
    ('implements', 'related', 'unrelated')
"""

from __future__ import annotations

import math
from decimal import ROUND_FLOOR, Decimal

# "Implements the target" starts here (the rubric's top band).
IMPLEMENTS = 0.8
# The seed's high relevance: context entries, the files vocabulary is learned from,
# the stopping rule's "three high-relevance files".
HIGH_RELEVANCE = 0.7
# "Related patterns or types" starts here: a related file of such a result may be worth
# following (expand), and a file below it is at most indirectly related.
RELATED = 0.5
# Below this a shown file is unrelated: the next cycle excludes it (the seed's refineQuery).
UNRELATED_BELOW = 0.2

_BANDS = ((IMPLEMENTS, "implements"), (RELATED, "related"), (UNRELATED_BELOW, "indirect"))


def band(score: float) -> str:
    """The rubric's name for a score: implements, related, indirect or unrelated."""
    for floor, name in _BANDS:
        if score >= floor:
            return name
    return "unrelated"


def two_places(score: float) -> str:
    """A score to two places, cut rather than rounded: 0.698 and 0.69999999999 are
    "0.69", below the rubric's 0.7 like the score itself (rounded, they read "0.70"
    outside the context). Cut in decimal, from the score's shortest spelling: 0.29 is
    "0.29" (in binary it is a hair below)."""
    if not math.isfinite(score):
        return f"{score:.2f}"
    return str(Decimal(repr(score)).quantize(Decimal("0.01"), rounding=ROUND_FLOOR))
