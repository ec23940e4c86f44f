#pragma once
// Helpers of the codegen test suites (QtTest): coloured kernel names as the corpus writes them, running a program
// through the runtime (the interpreter when it has no entry), comparing float buffers.
#include <QtTest/QtTest>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "engine/codegen/opt.h"
#include "engine/codegen/program.h"
#include "engine/runtime/program_runner.h"

namespace ts_test {

using Segments = std::vector<std::pair<std::string, std::string>>;  // (text, color) as in the corpus name_segments
inline std::string colored_from(const std::string& kind, const Segments& segs) {
  std::string s = kind;
  for (auto& [t, c] : segs) s += ts::colored("_", "BLACK") + ts::colored(t, c);
  return s;
}
inline void run_interp(const ts::ProgramSpec& p, std::vector<std::vector<float>*> bufs, std::vector<int64_t> vars = {}) {
  std::vector<void*> ptrs;
  for (auto* b : bufs) ptrs.push_back(b->data());
  ts::run_program(p, nullptr, ptrs, vars);
}
inline void check_close(const std::vector<float>& got, const std::vector<float>& want, float tol = 1e-5f) {
  QCOMPARE(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    if (std::fabs(got[i] - want[i]) > tol * std::max(1.0f, std::fabs(want[i])))
      QFAIL(qPrintable(QString("element %1: got %2 want %3").arg(i).arg(got[i]).arg(want[i])));
}
inline std::vector<std::string> opts(std::initializer_list<const char*> l) { return std::vector<std::string>(l.begin(), l.end()); }

}  // namespace ts_test
