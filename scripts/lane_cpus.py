#!/usr/bin/env python3
"""Splits the host's CPUs between gpu-check's two measure lanes.

  lane_cpus.py GPU_INDEX      prints two taskset lists: the timing lane's, the checking lane's

The timing lane gets whole physical cores (every SMT sibling of them, so no checking work
shares a core with a launch-bound timing run) on the NUMA side of its GPU (the PCI device's
local_cpulist), half of them but at least 4; the checking lane gets every other CPU. On
2026-11-30 a plain split of CPU numbers (0-15 | 16-31) left launch-bound eager timings with
CoVs of 10-25%; on many hosts CPU n and n+16 are the two threads of one core, so that split
may have put both lanes on every core. Prints nothing when the topology cannot be read.
"""
import os
import subprocess
import sys


def parse_list(text):
    cpus = set()
    for part in text.strip().split(","):
        if not part:
            continue
        if "-" in part:
            lo, hi = part.split("-")
            cpus.update(range(int(lo), int(hi) + 1))
        else:
            cpus.add(int(part))
    return cpus


def read(path):
    with open(path, encoding="ascii") as f:
        return f.read()


def gpu_local_cpus(gpu):
    bus = subprocess.run(["nvidia-smi", "--query-gpu=pci.bus_id", "--format=csv,noheader", "-i", str(gpu)],
                         capture_output=True, text=True, check=True).stdout.strip().lower()
    domain, rest = bus.split(":", 1)
    return parse_list(read(f"/sys/bus/pci/devices/{domain[-4:]}:{rest}/local_cpulist"))


def main(gpu):
    allowed = os.sched_getaffinity(0)
    try:
        local = gpu_local_cpus(gpu) & allowed or allowed
    except (OSError, ValueError, subprocess.CalledProcessError):
        local = allowed
    cores = {}  # first sibling -> all siblings
    for cpu in sorted(local):
        try:
            siblings = parse_list(read(f"/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list"))
        except OSError:
            siblings = {cpu}
        cores.setdefault(min(siblings), siblings & allowed)
    if len(cores) < 2:
        return 0
    wanted = max(4, len(cores) // 2)
    timing = set()
    for first in sorted(cores)[:min(wanted, len(cores) - 1)]:
        timing |= cores[first]
    checking = allowed - timing
    if not checking:
        return 0
    join = lambda s: ",".join(str(c) for c in sorted(s))
    print(join(timing), join(checking))
    return 0


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 0))
