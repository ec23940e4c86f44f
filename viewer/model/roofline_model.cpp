#include "viewer/model/roofline_model.h"

#include <algorithm>
#include <cmath>

#include "viewer/model/timings_model.h"

namespace tsv {

double Roofline::roof(double intensity) const {
  return has_roof() ? std::min(limits.peak_gflops, limits.bandwidth_gbs * intensity) : 0.0;
}

double Roofline::ridge() const { return has_roof() ? limits.peak_gflops / limits.bandwidth_gbs : 0.0; }

const RooflinePoint* Roofline::point_of(int call) const {
  for (const RooflinePoint& p : points)
    if (p.call == call) return &p;
  return nullptr;
}

Roofline Roofline::of(const Session& s) {
  Roofline r;
  r.limits = s.limits();
  const QList<Call>& calls = s.calls();
  for (int i = 0; i < calls.size(); ++i) {
    const Call& c = calls[i];
    const double t = TimingsModel::headline_of(c);
    QString why;
    if (c.kind != QLatin1String("kernel")) why = QStringLiteral("a %1: no ops").arg(c.kind.isEmpty() ? QStringLiteral("call") : c.kind);
    else if (!(c.estimates.ops > 0) || !std::isfinite(c.estimates.ops)) why = QStringLiteral("no ops");
    else if (!(c.estimates.mem > 0) || !std::isfinite(c.estimates.mem)) why = QStringLiteral("no memory touched");
    else if (!(t > 0) || !std::isfinite(t)) why = QStringLiteral("no time");
    if (!why.isEmpty()) {
      r.skipped.push_back({i, why});
      continue;
    }
    RooflinePoint p;
    p.call = i;
    p.intensity = c.estimates.ops / c.estimates.mem;
    p.seconds = t;
    p.gflops = c.estimates.ops / t / 1e9;
    p.gbs = c.estimates.mem / t / 1e9;
    p.warm_runs = std::max<int>(0, c.times.size() - 1);
    // a number too large or too small for the log axes (an odd trace) is not placed either
    if (!std::isfinite(p.intensity) || !std::isfinite(p.gflops) || !(p.intensity > 0) || !(p.gflops > 0)) {
      r.skipped.push_back({i, QStringLiteral("no finite intensity or rate")});
      continue;
    }
    r.points.push_back(p);
  }
  return r;
}

}  // namespace tsv
