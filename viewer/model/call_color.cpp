#include "viewer/model/call_color.h"

#include <QHash>

#include "viewer/model/session.h"

namespace tsv {

QColor call_color(int item) {
  static const QColor palette[] = {QColor(0xff, 0xd6, 0xa5), QColor(0xca, 0xff, 0xbf), QColor(0x9b, 0xf6, 0xff),
                                   QColor(0xff, 0xad, 0xad), QColor(0xbd, 0xb2, 0xff), QColor(0xfd, 0xff, 0xb6),
                                   QColor(0xa0, 0xc4, 0xff), QColor(0xff, 0xc6, 0xff), QColor(0xd4, 0xe0, 0x9b),
                                   QColor(0xf1, 0xc0, 0xe8), QColor(0xb9, 0xfb, 0xc0), QColor(0xe9, 0xd5, 0xc5)};
  return palette[(item % 12 + 12) % 12];
}

QList<int> call_items(const Session& s) {
  QList<int> out;
  out.reserve(s.calls().size());
  QHash<int, int> seen;  // schedule index -> its calls so far
  for (const Call& c : s.calls()) {
    int n = seen.value(c.schedule_index, 0);
    seen.insert(c.schedule_index, n + 1);
    const int ctx = s.schedule_context(c.schedule_index);
    const int items = ctx >= 0 ? int(s.contexts()[ctx].linear.size()) : 0;
    out.push_back(items > 0 ? n % items : n);
  }
  return out;
}

QList<QColor> call_colors(const Session& s) {
  QList<QColor> out;
  for (int item : call_items(s)) out.push_back(call_color(item));
  return out;
}

QColor call_outline(const QColor& fill) { return fill.darker(170); }

}  // namespace tsv
