#pragma once
// Provenance of an interpreted kernel's stores: for every element a kernel wrote, the elements of its buffers that the
// written value was computed from, as the interpreter (interpreter.h) saw them while it ran the linearized program. A
// second, independent answer to "what does this output read" beside the one read off the optimized AST without running
// anything (the viewer's access model), so each can be checked against the other.
//
// While a launch is recorded, every value of the program carries the set of global elements it depends on:
//   - a LOAD of a buffer element (its gate on): that element, plus what its index and gate depend on (a gather's
//     index is data); a LOAD whose gate is off loads nothing and carries only what its index and gate depend on
//   - ALU ops, CAST, BITCAST: the union of their operands' (WHERE: the condition's included)
//   - an accumulator (DEFINE_ACC; STORE to it, LOAD of it): what was last stored into it, across loop iterations
//   - LOCAL memory: each element what was last stored into it in this work-group; a LOAD of it adds its index's
//   - CONST, PARAM, RANGE, SPECIAL: nothing (loop and launch indices are no data)
// A STORE to a buffer element (its gate on) records what the stored value depends on under that element; not what its
// index or gate depend on. An element stored more than once keeps the union over its stores.
// Recording is off by default and then costs nothing: the runner checks the switch once per launch.
#include <compare>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ts {

// One element of a kernel's buffer: the buffer's PARAM slot and the element's index in it.
struct ElementRef {
  int slot = 0;
  int64_t index = 0;
  auto operator<=>(const ElementRef&) const = default;
};

// What one interpreted launch stored, and from what.
struct Provenance {
  std::string kernel;  // the program's name
  // each element a STORE wrote -> the elements its value was computed from (sorted, each once)
  std::map<ElementRef, std::vector<ElementRef>> stores;
  // adds `other`'s stores (another core's of the same launch): an element both stored gets the union
  void merge(Provenance&& other);
};

// Turns recording of every interpreted launch (INTERP, INTERP:GPU, BEAM's candidates on them) on or off, process-wide.
void record_provenance(bool on);
bool recording_provenance();
// the launches recorded since the last take_provenance, in the order they ran, and forgets them (they are kept until
// taken: memory grows with every launch recorded)
std::vector<Provenance> take_provenance();
// adds one launch's record (the program runner calls it after an interpreted launch while recording is on)
void keep_provenance(Provenance p);

}  // namespace ts
