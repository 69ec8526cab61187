"""The order of runs: which benchmark runs next, given the plan and what is already stored.

Run counts follow hyperfine: ``runs`` fixes the count; otherwise each benchmark runs at least
``min_runs`` times and for at least ``min_time_s`` seconds (estimated from the first measured
run), at most ``max_runs`` times; ``max_time_s`` caps the wall time of the whole session.

Order: with several benchmarks, the default ``interleaved`` order runs them in rounds, each round
a fresh random permutation (seeded, stored), so slow drift in the machine (thermal, background
daemons, frequency) hits every benchmark alike instead of biasing the one measured last.
``sequential`` runs all of one benchmark (its warmups, then its runs), then the next, like
hyperfine.

The permutations are numpy's ``default_rng([seed, worker, runs done]).permutation(needs)``,
computed here in pure Python (:class:`OrderRng`: numpy's SeedSequence, PCG64 and Fisher-Yates
shuffle, bit for bit), so ``benchlab run`` does not import numpy (~80 ms) and a session stored
or resumed by an older benchlab gets the same order it always got (tests/core/test_planner_rng.py
compares both on thousands of seeds).
"""

from __future__ import annotations

import math

from benchlab.core.plan import RunPlan
from benchlab.records import record

_MASK32 = 0xFFFF_FFFF
_MASK64 = (1 << 64) - 1
_MASK128 = (1 << 128) - 1
# numpy.random.SeedSequence's hash constants (bit_generator.pyx), pool of 4 words of 32 bits
_INIT_A, _MULT_A, _INIT_B, _MULT_B = 0x43B0D7E5, 0x931E8875, 0x8B51F9DD, 0x58F38DED
_MIX_MULT_L, _MIX_MULT_R = 0xCA01F9DD, 0x4973F715
_POOL = 4
# PCG64's 128-bit LCG multiplier (pcg64.h, PCG_DEFAULT_MULTIPLIER_128)
_PCG_MULT = 0x2360ED051FC65DA44385DF649FCCF645


def _seed_state(entropy: list[int]) -> list[int]:
    """``SeedSequence(entropy).generate_state(4, numpy.uint64)`` as Python ints (each entropy
    int >= 0 is split into 32-bit words, least significant first, 0 being one word)."""
    words: list[int] = []
    for value in entropy:
        words.append(value & _MASK32)
        value >>= 32
        while value:
            words.append(value & _MASK32)
            value >>= 32
    hash_const = _INIT_A

    def hashmix(value: int) -> int:
        nonlocal hash_const
        value ^= hash_const
        hash_const = (hash_const * _MULT_A) & _MASK32
        value = (value * hash_const) & _MASK32
        return value ^ (value >> 16)

    def mix(x: int, y: int) -> int:
        result = (_MIX_MULT_L * x - _MIX_MULT_R * y) & _MASK32
        return result ^ (result >> 16)

    pool = [hashmix(words[i] if i < len(words) else 0) for i in range(_POOL)]
    for src in range(_POOL):
        for dst in range(_POOL):
            if src != dst:
                pool[dst] = mix(pool[dst], hashmix(pool[src]))
    for src in range(_POOL, len(words)):
        for dst in range(_POOL):
            pool[dst] = mix(pool[dst], hashmix(words[src]))
    out, hash_const = [], _INIT_B
    for i in range(8):
        value = pool[i % _POOL] ^ hash_const
        hash_const = (hash_const * _MULT_B) & _MASK32
        value = (value * hash_const) & _MASK32
        out.append(value ^ (value >> 16))
    return [out[2 * i] | out[2 * i + 1] << 32 for i in range(4)]


class OrderRng:
    """``numpy.random.default_rng(entropy)`` (PCG64) reduced to what the planner draws:
    :meth:`permutation` gives numpy's ``Generator.permutation`` of a list, bit for bit.

    ``entropy``: ints >= 0 (numpy's SeedSequence entropy).
    """

    def __init__(self, entropy: list[int]):
        s_high, s_low, i_high, i_low = _seed_state(entropy)
        self._inc = (((i_high << 64 | i_low) << 1) | 1) & _MASK128
        self._state = 0
        self._step()
        self._state = (self._state + (s_high << 64 | s_low)) & _MASK128
        self._step()
        self._spare32: int | None = None  # numpy keeps the high half of a 64-bit draw

    def _step(self) -> None:
        self._state = (self._state * _PCG_MULT + self._inc) & _MASK128

    def next64(self) -> int:
        """The next 64-bit output (PCG XSL-RR 128/64)."""
        self._step()
        state = self._state
        folded = ((state >> 64) ^ state) & _MASK64
        rot = state >> 122
        return ((folded >> rot) | (folded << (-rot & 63))) & _MASK64

    def next32(self) -> int:
        """The next 32-bit output: the low half of a 64-bit draw, then its high half."""
        if self._spare32 is not None:
            value, self._spare32 = self._spare32, None
            return value
        value = self.next64()
        self._spare32 = value >> 32
        return value & _MASK32

    def interval(self, maximum: int) -> int:
        """A uniform int in ``[0, maximum]`` (numpy's ``random_interval``: masked rejection)."""
        if maximum == 0:
            return 0
        mask = (1 << maximum.bit_length()) - 1
        draw = self.next32 if maximum <= _MASK32 else self.next64
        while True:
            value = draw() & mask
            if value <= maximum:
                return value

    def permutation(self, items: list[int]) -> list[int]:
        """A shuffled copy of ``items`` (numpy's Fisher-Yates, from the last position down)."""
        out = list(items)
        for i in range(len(out) - 1, 0, -1):
            j = self.interval(i)
            out[i], out[j] = out[j], out[i]
        return out


@record
class PlannedRun:
    """The next run to execute: benchmark index, warmup or measured, 0-based iteration."""

    benchmark: int
    warmup: bool
    iteration: int

    def __init__(self, benchmark: int, warmup: bool, iteration: int) -> None:
        # written out: one is made per run, and the generic record __init__ costs ~2 us
        self.benchmark, self.warmup, self.iteration = benchmark, warmup, iteration


class RunPlanner:
    """Decides the next run from the plan and the runs done so far (resumable).

    ``done_warmups[i]``/``done_runs[i]`` count what benchmark ``i`` already has in the store;
    ``planned_runs`` (by benchmark name) fixes the target once it is known.
    """

    def __init__(self, plan: RunPlan, done_warmups: list[int], done_runs: list[int],
                 elapsed_s: float = 0.0, worker: int = 0):
        self.p = plan
        self.done_warmups = list(done_warmups)
        self.done_runs = list(done_runs)
        self.elapsed_s = elapsed_s
        self.first_wall_s: list[float | None] = [None] * len(plan.benchmarks)
        # Seeded by what is done so far, so a resumed session continues with fresh rounds.
        self._rng = OrderRng([plan.seed, worker, sum(done_runs) + sum(done_warmups)])
        self._queue: list[int] = []

    def target(self, i: int) -> int | None:
        """Number of measured runs benchmark ``i`` will get, or None until it can be estimated."""
        p = self.p
        if p.runs is not None:
            return p.runs
        name = p.benchmarks[i].name
        if name in p.planned_runs:
            return p.planned_runs[name]
        first = self.first_wall_s[i]
        if first is None:
            return None
        want = p.min_runs if first <= 0 else max(p.min_runs, math.ceil(p.min_time_s / first))
        if p.max_runs is not None:
            want = min(want, p.max_runs)
        p.planned_runs[name] = int(want)
        return int(want)

    def record(self, run: PlannedRun, wall_s: float | None, counted: bool = False) -> None:
        """Account for a finished run (``wall_s``, s, of an ok measured run seeds the estimate).

        ``counted``: the run was counted as done when it was sent (:meth:`reserve`).
        """
        if not counted:
            self.reserve(run)
        if not run.warmup:
            if self.first_wall_s[run.benchmark] is None and wall_s is not None:
                self.first_wall_s[run.benchmark] = wall_s
        self.elapsed_s += wall_s or 0.0

    def reserve(self, run: PlannedRun, sign: int = 1) -> None:
        """Count ``run`` as done for planning (a run sent to a cluster, before it returns;
        ``sign`` -1 takes it back)."""
        if run.warmup:
            self.done_warmups[run.benchmark] += sign
        else:
            self.done_runs[run.benchmark] += sign

    def has_work(self) -> bool:
        """Whether runs remain to be handed out (without drawing from the order)."""
        p = self.p
        for i in range(len(p.benchmarks)):
            if self.done_warmups[i] < p.warmup:
                return True
            target = self.target(i)
            if self.done_runs[i] < (target if target is not None else 1):
                return True
        return False

    def remaining(self) -> int | None:
        """Measured runs still to do, or None while a target is unknown."""
        total = 0
        for i in range(len(self.p.benchmarks)):
            t = self.target(i)
            if t is None:
                return None
            total += max(0, t - self.done_runs[i])
        return total

    def total(self) -> int | None:
        """All measured runs of the session, or None while unknown."""
        if self.p.runs is not None:  # asked once a run (the progress line's total)
            return self.p.runs * len(self.p.benchmarks)
        targets = [self.target(i) for i in range(len(self.p.benchmarks))]
        return None if any(t is None for t in targets) else sum(targets)  # type: ignore[arg-type]

    def next(self) -> PlannedRun | None:
        """The next run, or None when the session is complete (or ``max_time_s`` is spent)."""
        p = self.p
        n = len(p.benchmarks)
        if p.order == "sequential":
            # hyperfine's order: each benchmark's warmups right before its own runs (its setup
            # hook has just run, and its cleanup follows its last run)
            for i in range(n):
                if self._needs(i):
                    if self.done_warmups[i] < p.warmup:
                        return PlannedRun(i, True, self.done_warmups[i])
                    break
        else:
            for i in range(n):  # warmups first, in declared order: they only prime caches
                if self.done_warmups[i] < p.warmup:
                    return PlannedRun(i, True, self.done_warmups[i])
        if p.max_time_s is not None and self.elapsed_s >= p.max_time_s and \
                all(d >= min(p.min_runs, self.target(i) or p.min_runs)
                    for i, d in enumerate(self.done_runs)):
            return None
        needs = [i for i in range(n) if self._needs(i)]
        if not needs:
            return None
        if p.order == "sequential":
            i = needs[0]
            return PlannedRun(i, False, self.done_runs[i])
        self._queue = [i for i in self._queue if i in needs]
        if not self._queue:
            self._queue = self._rng.permutation(needs)
        i = int(self._queue.pop(0))
        return PlannedRun(i, False, self.done_runs[i])

    def _needs(self, i: int) -> bool:
        t = self.target(i)
        return self.done_runs[i] < (t if t is not None else 1)
