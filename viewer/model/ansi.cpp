#include "viewer/model/ansi.h"

namespace tsv {

namespace {
// tinygrad uses the 8 normal and 8 bright colors; these are readable on light and dark backgrounds
QColor sgr_color(int code) {
  switch (code) {
    case 30: return QColor(0x50, 0x50, 0x50);
    case 31: return QColor(0xd0, 0x30, 0x30);
    case 32: return QColor(0x2a, 0xa1, 0x3a);
    case 33: return QColor(0xc0, 0x90, 0x10);
    case 34: return QColor(0x30, 0x60, 0xe0);
    case 35: return QColor(0xb0, 0x40, 0xc0);
    case 36: return QColor(0x10, 0x9a, 0xaa);
    case 37: return QColor(0xa0, 0xa0, 0xa0);
    case 90: return QColor(0x80, 0x80, 0x80);
    case 91: return QColor(0xff, 0x55, 0x55);
    case 92: return QColor(0x40, 0xc0, 0x50);
    case 93: return QColor(0xe0, 0xb0, 0x20);
    case 94: return QColor(0x55, 0x80, 0xff);
    case 95: return QColor(0xd0, 0x60, 0xe0);
    case 96: return QColor(0x30, 0xc0, 0xd0);
    case 97: return QColor();  // bright white: the default foreground, so it stays readable on light themes
    default: return QColor();
  }
}
}  // namespace

QList<AnsiSegment> parse_ansi(const QString& s) {
  QList<AnsiSegment> out;
  QColor cur;
  QString text;
  for (qsizetype i = 0; i < s.size();) {
    if (s[i] == QChar(0x1b) && i + 1 < s.size() && s[i + 1] == '[') {
      qsizetype end = s.indexOf('m', i + 2);
      if (end < 0) break;
      if (!text.isEmpty()) out.push_back({text, cur}), text.clear();
      const auto codes = s.mid(i + 2, end - i - 2).split(';');
      for (const auto& c : codes) {
        int code = c.toInt();
        if (code == 0) cur = QColor();
        else if ((code >= 30 && code <= 37) || (code >= 90 && code <= 97)) cur = sgr_color(code);
      }
      i = end + 1;
      continue;
    }
    text += s[i++];
  }
  if (!text.isEmpty()) out.push_back({text, cur});
  return out;
}

QString strip_ansi(const QString& s) {
  QString out;
  for (const auto& seg : parse_ansi(s)) out += seg.text;
  return out;
}

QColor main_ansi_color(const QString& s) {
  for (const auto& seg : parse_ansi(s))
    if (seg.color.isValid() && seg.color != sgr_color(90) && !seg.text.trimmed().isEmpty()) return seg.color;
  return QColor();
}

}  // namespace tsv
