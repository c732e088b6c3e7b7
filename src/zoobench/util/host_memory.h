// How zoobench's processes use host memory while they measure.
#pragma once

namespace zoobench {

// Makes glibc's malloc serve tensor-sized blocks (up to 32 MiB) from its heap and keep freed
// memory instead of returning it to the kernel. With glibc's defaults, a CPU training step
// maps and unmaps its large activations every iteration, and the page faults of touching fresh
// pages cost more than the arithmetic: resnet18's step took 290 ms that way and 72 ms with
// this (2 cores, LibTorch 1.13). glibc also raises its threshold by itself after larger blocks
// are freed, so without this a timing depended on what ran before it in the process (the
// float64 golden run of an accuracy check made the following performance run 4x faster).
// Returns false when glibc refused a setting. Called once at the start of `zoobench`.
bool keep_freed_host_memory();

}  // namespace zoobench
