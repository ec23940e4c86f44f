#pragma once
// Runs work on a thread whose stack is large enough that the depth of a graph is bounded by memory, not by the
// 8 MB C stack: the engine's graph walks (scheduling, rewriting, rendering) recurse along the graph, and a chain of
// 100,000 ops is a valid program.
#include <cstddef>
#include <functional>

namespace ts {

constexpr size_t kEngineStackBytes = size_t{4} << 30;  // reserved address space; pages are committed as they are used

// Calls fn on a fresh thread with a stack of `bytes` and waits for it; an exception fn throws is rethrown here.
void run_with_big_stack(const std::function<void()>& fn, size_t bytes = kEngineStackBytes);

// Bytes of C stack left below the caller's frame on this thread (a recursive walk stops with an Error, not a crash,
// when this runs low).
size_t stack_remaining();

}  // namespace ts
