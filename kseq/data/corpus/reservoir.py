"""A bounded, seeded, uniform sample of a stream of unknown length (Algorithm R).

Example:
>>> sample = Reservoir(3, seed=0)
>>> for n in range(1000):
...     sample.add(n)
>>> len(sample.items), sample.seen
(3, 1000)
>>> again = Reservoir(3, seed=0)
>>> for n in range(1000):
...     again.add(n)
>>> again.items == sample.items
True
"""

import random


class Reservoir:
    """Keeps `size` of the items added, each equally likely, the same for the same seed."""

    def __init__(self, size, seed=0):
        self.size, self.seen, self.items = size, 0, []
        self._random = random.Random(seed)

    def add(self, item):
        self.seen += 1
        if len(self.items) < self.size:
            self.items.append(item)
            return
        slot = self._random.randrange(self.seen)
        if slot < self.size:
            self.items[slot] = item
