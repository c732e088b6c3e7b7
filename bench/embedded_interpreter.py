#!/usr/bin/env python3
"""How fast Python code runs in the interpreter zoobench embeds, against the `python3`
executable upstream's harness runs in.

zoobench's model processes run the torch.compile backends (dynamo's tracing, AOTAutograd,
Inductor's lowering: Python, most of a compile's time) in an interpreter embedded from the
shared libpython. Debian and Ubuntu build their `python3` executable with libpython linked in
statically; the shared library is other code (position-independent, built without the
executable's profile-guided optimization), and may be slower. This builds a host that embeds the
shared library (bench/embedded_interpreter_host.c, with python3-config --embed of the same
interpreter) and, where the interpreter has its static archive (libpythonX.Y.a), the same host
linked with that archive as the executable is (`embedded-static`: what a zoobench that carried
the interpreter in its own executable would run), and times, in each, alternating, one process
at a time:

  - a pure-Python loop (dicts, calls, attribute lookups);
  - torch.fx's symbolic tracing of torchvision's resnet50, 20 times (Python walking a model's
    forward, as dynamo's tracing does; any torch with torchvision);
  - with torch 2 (`--compile`): a cold torch.compile of a small MLP through the eager backend
    (dynamo's tracing only) and through Inductor, and one training step of torchvision's
    resnet50 compiled through aot_eager (dynamo and AOTAutograd on a real model's forward and
    backward: a list model's compile without Inductor's code generation), in a fresh cache each
    time, torch imported before the clock starts.

    /usr/bin/python3 bench/embedded_interpreter.py [--python /usr/bin/python3] [--runs 5]
        [--compile] [--cpus 1]

Prints one line per workload: the median seconds of each side and each embedded side's ratio to
the executable. Exit status 0; 2 when the shared-library host cannot be built.
"""
import argparse
import os
import shlex
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

WORKLOAD = r'''
import sys, time
kind = sys.argv[1]

def python_loop():
    table = {}
    for i in range(2_000_000):
        table[i % 1000] = table.get(i % 1000, 0) + i
    class Point:
        def __init__(self, x): self.x = x
        def next(self): return self.x + 1
    return sum(Point(i).next() for i in range(1_000_000))

def fx_trace():
    # torch.fx's symbolic tracing: Python walking a model's forward, as dynamo's tracing does
    import torch.fx
    import torchvision
    model = torchvision.models.resnet50()
    for _ in range(20):
        torch.fx.symbolic_trace(model).recompile()

def compile_mlp(backend):
    import torch
    torch._dynamo.reset()
    model = torch.nn.Sequential(*[m for _ in range(8) for m in (torch.nn.Linear(64, 64), torch.nn.GELU())])
    compiled = torch.compile(model, backend=backend)
    compiled(torch.randn(4, 64))

def compile_training_step():
    import torch
    import torchvision
    torch._dynamo.reset()
    model = torchvision.models.resnet50()
    compiled = torch.compile(model, backend="aot_eager")
    compiled(torch.randn(2, 3, 64, 64)).sum().backward()

if kind != "python":
    import torch  # not timed: loading torch is mostly shared libraries, and both sides pay it
    if kind in ("fx", "resnet50_step"):
        import torchvision
start = time.perf_counter()
if kind == "python":
    python_loop()
elif kind == "fx":
    fx_trace()
elif kind == "resnet50_step":
    compile_training_step()
else:
    compile_mlp(kind)
print(f"{time.perf_counter() - start:.4f}")
'''


def python_config(python: str) -> str:
    config = python + "-config" if os.path.exists(python + "-config") else None
    if config is None:
        config = subprocess.run([python, "-c", "import sysconfig, os; print(os.path.join("
                                 "sysconfig.get_config_var('BINDIR'), 'python' + "
                                 "sysconfig.get_config_var('VERSION') + '-config'))"],
                                capture_output=True, text=True, check=True).stdout.strip()
    return config


def build_host(python: str, folder: str) -> str:
    """The host as zoobench's plugin embeds Python: linked with the shared libpython."""
    config = python_config(python)
    flags = subprocess.run([config, "--cflags", "--ldflags", "--embed"], capture_output=True,
                           text=True)
    if flags.returncode != 0:
        sys.exit(f"embedded_interpreter.py: {config} --embed failed: {flags.stderr.strip()}")
    host = os.path.join(folder, "host")
    command = ["cc", "-O2", os.path.join(HERE, "embedded_interpreter_host.c"), "-o", host] + \
        shlex.split(flags.stdout)
    built = subprocess.run(command, capture_output=True, text=True)
    if built.returncode != 0:
        print(built.stderr, file=sys.stderr)
        sys.exit(2)
    return host


STATIC_LINK = ("import sysconfig as s, os; v = s.get_config_var; "
               "print(os.path.join(v('LIBPL'), v('LIBRARY'))); "
               "print(' '.join(v(k) or '' for k in ('MODLIBS', 'LIBS', 'SYSLIBS', 'LINKFORSHARED')))")


def build_static_host(python: str, folder: str):
    """The same host linked with the static libpython archive, as Debian's and Ubuntu's python3
    executable is (not position-independent, its symbols exported for extension modules): what
    a zoobench that carried the interpreter in its executable would run. (path, None) or (None,
    why not)."""
    archive, libraries = subprocess.run([python, "-c", STATIC_LINK], capture_output=True,
                                        text=True, check=True).stdout.splitlines()
    if not os.path.exists(archive):
        return None, f"no static libpython ({archive})"
    includes = subprocess.run([python_config(python), "--includes"], capture_output=True,
                              text=True).stdout
    host = os.path.join(folder, "host_static")
    command = ["cc", "-O2", "-no-pie", os.path.join(HERE, "embedded_interpreter_host.c"), "-o",
               host] + shlex.split(includes) + [archive] + shlex.split(libraries)
    built = subprocess.run(command, capture_output=True, text=True)
    if built.returncode != 0:
        return None, f"linking {archive} failed: {built.stderr.strip()[-300:]}"
    return host, None


def can_compile(python: str) -> bool:
    probe = subprocess.run([python, "-c", "import torch; print(torch.__version__, "
                            "hasattr(torch, 'compile'))"], capture_output=True, text=True)
    if probe.returncode == 0 and probe.stdout.split()[-1] == "True":
        return True
    version = probe.stdout.split()[0] if probe.returncode == 0 else "not importable"
    print(f"compile: not timed (torch {version} has no torch.compile)")
    return False


def seconds(command, environment) -> float:
    out = subprocess.run(command, capture_output=True, text=True, env=environment)
    if out.returncode != 0:
        sys.exit(f"embedded_interpreter.py: {command[0]} failed:\n{out.stderr[-2000:]}")
    return float(out.stdout.strip().splitlines()[-1])


def cpu_list(text: str) -> set:
    cpus = set()
    for part in text.split(","):
        first, _, last = part.partition("-")
        cpus.update(range(int(first), int(last or first) + 1))
    return cpus


def time_sides(sides, script, kind, runs, folder):
    """Median seconds of each side (name -> command prefix), the sides alternating run by run,
    each run in a fresh Inductor cache."""
    times = {name: [] for name in sides}
    for run in range(runs):
        for name, prefix in sides.items():
            cache = os.path.join(folder, f"cache-{run}-{name}")
            environment = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=cache)
            times[name].append(seconds(prefix + [script, kind], environment))
    return {name: statistics.median(values) for name, values in times.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--compile", action="store_true", help="also time cold torch.compile")
    parser.add_argument("--cpus", help="run every side on these CPUs (e.g. 1 or 0-3), as a "
                        "model's pipeline runs on its own: unpinned, a 2-core machine's timings "
                        "of one side varied by 1.6x from run to run")
    args = parser.parse_args()
    if args.cpus:
        os.sched_setaffinity(0, cpu_list(args.cpus))  # the sides inherit it
    python = os.path.realpath(args.python)
    with tempfile.TemporaryDirectory() as folder:
        sides = {"executable": [args.python],
                 "embedded": [build_host(python, folder), args.python]}
        static_host, why_not = build_static_host(python, folder)
        if static_host:
            sides["embedded-static"] = [static_host, args.python]
        else:
            print(f"embedded-static: not timed ({why_not})")
        script = os.path.join(folder, "workload.py")
        with open(script, "w") as f:
            f.write(WORKLOAD)
        kinds = ["python", "fx"]
        if args.compile and can_compile(args.python):
            kinds += ["eager", "inductor", "resnet50_step"]
        for kind in kinds:
            medians = time_sides(sides, script, kind, args.runs, folder)
            base = medians["executable"]
            others = "  ".join(f"{name} {value:.3f} s ({value / base:.2f}x)"
                               for name, value in medians.items() if name != "executable")
            print(f"{kind:13s} executable {base:.3f} s  {others}  ({args.runs} runs each, medians)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
