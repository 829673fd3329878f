"""Memory probing: how much memory this process may use, and refusing what cannot fit.

:func:`memory_limit` is the tightest of the machine's physical memory, the process's cgroup
limit and its ``RLIMIT_AS`` headroom; :func:`free_memory` reads what the machine can give
right now (``MemAvailable``).  :func:`check_fits_in_memory` refuses, before anything is
allocated, an array larger than :data:`MEMORY_FRACTION` of that memory, with a message
that says how much it needs and what to do.
"""

from __future__ import annotations

import os

# Fraction of the memory this process may use (memory_limit) that one array may take
# before we refuse: the rest is left to the interpreter, libraries and other arrays.
MEMORY_FRACTION = 0.5


def memory_limit() -> int:
    """Bytes of memory this process can use: the tightest of three limits.

    The machine's physical memory, the memory limit of the process's cgroup (v2
    ``memory.max`` or v1 ``memory.limit_in_bytes``, on its own cgroup and every ancestor),
    and the address space left under ``RLIMIT_AS``.  A container or ``ulimit -v`` is often
    far below the machine's memory, and exceeding it kills the process or fails an
    allocation half-way through a fit.

    Returns
    -------
    int
        The limit in bytes; a conservative 4 GiB when the physical memory is unknown.
    """
    try:
        physical = int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        physical = 4 * 2**30
    limits = [physical]
    cgroup = _cgroup_memory_limit()
    if cgroup is not None:
        limits.append(cgroup)
    address_space = _address_space_left()
    if address_space is not None:
        limits.append(address_space)
    return min(limits)


def _cgroup_memory_limit(cgroup_file="/proc/self/cgroup", mount="/sys/fs/cgroup") -> int | None:
    """Tightest memory limit over the process's cgroups and their ancestors, or None.

    ``cgroup_file`` lists the process's cgroups and ``mount`` is where the hierarchy is
    mounted (v1 controllers in subdirectories); tests point them at a fake tree.
    """
    try:
        with open(cgroup_file, encoding="ascii") as file:
            lines = file.read().splitlines()
    except OSError:
        return None
    limits = []
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        if controllers == "":
            root, name = mount, "memory.max"
        elif "memory" in controllers.split(","):
            root, name = os.path.join(mount, "memory"), "memory.limit_in_bytes"
        else:
            continue
        # Every ancestor limits the group too; inside a container the process's own path
        # is often not mounted, and the container's limit sits at the mount's root.
        while True:
            try:
                with open(os.path.join(root + path, name), encoding="ascii") as file:
                    value = file.read().strip()
                if value.isdigit():
                    limits.append(int(value))
            except OSError:
                pass
            if path in ("/", ""):
                break
            path = os.path.dirname(path.rstrip("/"))
    return min(limits) if limits else None


def _address_space_left() -> int | None:
    """Address space this process may still map under ``RLIMIT_AS``, or None (unlimited).

    The limit counts every mapping already made (interpreter, libraries, thread stacks), so
    what is left, not the limit itself, bounds the next allocations.
    """
    try:
        import resource
    except ImportError:  # Windows has no resource limits
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY:
        return None
    try:
        with open("/proc/self/statm", encoding="ascii") as file:
            mapped = int(file.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return int(soft)
    return max(0, int(soft) - mapped)


def available_memory() -> int:
    """Memory this process can use in bytes: :func:`memory_limit`, under its older name."""
    return memory_limit()


def free_memory(meminfo="/proc/meminfo") -> int | None:
    """Bytes the machine can give right now without swapping (``MemAvailable``), or None.

    Other processes hold part of the physical memory: a plan that fits the process's limit
    can still fail when the machine is busy, so long jobs compare their plan with this too.
    """
    try:
        with open(meminfo, encoding="ascii") as file:
            for line in file:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def spare_memory() -> int:
    """The tighter of :func:`available_memory` (the process's limit) and :func:`free_memory`."""
    limit = available_memory()
    free = free_memory()
    return limit if free is None else min(limit, free)


def check_fits_in_memory(n_bytes: int, what: str, advice: str, *, now=False) -> None:
    """Refuse, before allocating, an array larger than half the memory this process can use.

    With ``now=True`` the memory free on the machine at this moment counts too
    (:func:`spare_memory`): for plans that allocate much at once, such as a grid.

    Raises
    ------
    ValueError
        ``what`` would need so many GiB, more than this process can spare, then ``advice``.

    Examples
    --------
    >>> from snacks_core.core.memory import check_fits_in_memory
    >>> check_fits_in_memory(2**20, "A small array", "Use fewer rows.")
    >>> check_fits_in_memory(2**62, "A huge array", "Use fewer rows.")
    Traceback (most recent call last):
    ...
    ValueError: A huge array would need 4294967296.0 GiB, more than the ... Use fewer rows.
    """
    limit = MEMORY_FRACTION * (spare_memory() if now else available_memory())
    if n_bytes > limit:
        raise ValueError(
            f"{what} would need {n_bytes / 2**30:.1f} GiB, more than the "
            f"{limit / 2**30:.1f} GiB this process can spare. {advice}"
        )
