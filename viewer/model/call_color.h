#pragma once
#include <QColor>
#include <QList>

namespace tsv {
class Session;

// The one colour of a call, in every pane and the report: the tensor graph's nodes it computes, its node in the
// kernel graph, its Timings bar, its Roofline dot and its swatch in the schedule and the report. It is keyed by the
// call's schedule item (its place in its schedule's LINEAR), so the n-th call of each schedule shares a colour.
// Pastels far enough apart that neighbouring calls read apart; they repeat after twelve.
QColor call_color(int item);
// per call of the session: its item in its schedule (a TinyJit replay's run repeats the captured schedule's items)
QList<int> call_items(const Session& s);
// per call of the session: call_color of its item
QList<QColor> call_colors(const Session& s);
// an outline of a call's colour, dark enough to read on a light background (bars, dots, swatches)
QColor call_outline(const QColor& fill);

}  // namespace tsv
