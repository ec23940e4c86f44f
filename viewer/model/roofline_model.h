#pragma once
#include <QList>
#include <QString>

#include "viewer/model/session.h"

namespace tsv {

// One kernel call on the roofline: its arithmetic intensity (estimated ops over the bytes of distinct global memory it
// touches, FLOP/byte) and what it achieved in the Timings pane's headline time (the median of its warm runs; a call
// that ran once: its one run).
struct RooflinePoint {
  int call = -1;
  double intensity = 0;  // ops / mem
  double gflops = 0;     // ops / seconds / 1e9
  double gbs = 0;        // mem / seconds / 1e9
  double seconds = 0;    // TimingsModel::headline_of
  int warm_runs = 0;     // 0: the call ran once
};
// a call that is not placed, and why ("a copy: no ops")
struct RooflineSkip {
  int call = -1;
  QString why;
};

// The roofline of a trace: each kernel call with ops, memory and a time placed; the roof from the trace's measured
// limits, min(peak, bandwidth x intensity), when it has them.
struct Roofline {
  QList<RooflinePoint> points;
  QList<RooflineSkip> skipped;
  MeasuredLimits limits;
  bool has_roof() const { return limits.valid(); }
  // the roof at `intensity` in GFLOP/s (0 without limits)
  double roof(double intensity) const;
  // the intensity where the bandwidth slope meets the peak (0 without limits)
  double ridge() const;
  // the point of `call`, or nullptr
  const RooflinePoint* point_of(int call) const;
  static Roofline of(const Session& s);
};

}  // namespace tsv
