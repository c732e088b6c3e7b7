"""zoo_compile: the Python side of zoobench's torch.compile backends (python_eager, inductor,
aot_eager, any dynamo backend). zoobench embeds CPython (src/zoobench/python/) and calls into
this package; accuracy verdicts and timings stay in zoobench's C++ engines.

  rebuild      the zoo model as a Python module again: the manifest's `rebuild` record (the
               exporter's source and build context), eval.pt's weights, and the proof that it
               computes what eval.pt computes
  session      one model prepared for one backend: compile, run, training step (upstream's
               forward/loss/backward compiled, optimizer step eager), training state, dynamo's
               graph counts
  frame_watch  which frames dynamo gave up on (upstream's fallbacks_to_eager), the skipped too
  environment  what this Python can do: torch version, torch.compile, dynamo's backend names
  compiler_bisect  Inductor's compiler bisector (torch._inductor.compiler_bisector) over
               zoobench's accuracy check, for `zoobench bisect`: the driver, and the hooks a
               session calls in each of its children
"""
