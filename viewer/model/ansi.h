#pragma once
#include <QColor>
#include <QList>
#include <QString>

namespace tsv {

// One run of text in a single color, cut from a string with ANSI SGR escapes (kernel names carry them).
struct AnsiSegment {
  QString text;
  QColor color;  // invalid: the default text color
};

QList<AnsiSegment> parse_ansi(const QString& s);
QString strip_ansi(const QString& s);
// The first non-gray color of a colored name, for views that color a whole cell.
QColor main_ansi_color(const QString& s);

}  // namespace tsv
