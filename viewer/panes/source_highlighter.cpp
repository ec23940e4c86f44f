#include "viewer/panes/source_highlighter.h"

namespace tsv {

SourceHighlighter::SourceHighlighter(QTextDocument* doc) : QSyntaxHighlighter(doc) { rebuild(); }

void SourceHighlighter::set_language(const QString& lang) {
  if (lang == lang_) return;
  lang_ = lang;
  rebuild();
}

void SourceHighlighter::set_dark(bool dark) {
  if (dark == dark_) return;
  dark_ = dark;
  rebuild();
}

void SourceHighlighter::rebuild() {
  auto fmt = [&](QColor light, QColor dark, bool bold = false) {
    QTextCharFormat f;
    f.setForeground(dark_ ? dark : light);
    if (bold) f.setFontWeight(QFont::Bold);
    return f;
  };
  QTextCharFormat keyword = fmt(QColor(0x00, 0x33, 0xb3), QColor(0x6c, 0xa0, 0xff), true);
  QTextCharFormat type = fmt(QColor(0x00, 0x80, 0x80), QColor(0x4e, 0xd0, 0xc0));
  QTextCharFormat number = fmt(QColor(0x17, 0x50, 0xeb), QColor(0xd0, 0x9a, 0x60));
  QTextCharFormat comment = fmt(QColor(0x80, 0x80, 0x80), QColor(0x90, 0x90, 0x90));
  QTextCharFormat name = fmt(QColor(0x87, 0x10, 0x94), QColor(0xd0, 0x80, 0xe0));
  rules_.clear();
  if (lang_ == "llvm") {
    rules_.push_back({QRegularExpression(R"(\b(define|declare|ret|br|label|phi|load|store|getelementptr|inbounds|call|icmp|fcmp|select|alloca|add|sub|mul|fadd|fsub|fmul|fdiv|shl|lshr|ashr|and|or|xor|sext|zext|trunc|bitcast|sitofp|fptosi|uitofp|fptoui|fpext|fptrunc|nsw|nuw|fast|align|noalias|nocapture|to|slt|sgt|sle|sge|ult|ugt|eq|ne|olt|ogt|oeq|une|extractelement|insertelement|shufflevector|attributes)\b)"), keyword});
    rules_.push_back({QRegularExpression(R"(\b(i1|i8|i16|i32|i64|half|float|double|void|ptr)\b|<\d+ x)"), type});
    rules_.push_back({QRegularExpression(R"([%@][\w.$]+)"), name});
    rules_.push_back({QRegularExpression(R"(\b-?\d+(\.\d+)?(e[+-]?\d+)?\b|\b0x[0-9a-fA-F]+\b)"), number});
    rules_.push_back({QRegularExpression(R"(;.*$)"), comment});
  } else {
    rules_.push_back({QRegularExpression(R"(\b(for|if|else|return|while|do|break|continue|typedef|struct|const|restrict|static|inline|void|layout|uniform|buffer|in|out|shared|barrier|__attribute__)\b)"), keyword});
    rules_.push_back({QRegularExpression(R"(\b(float|double|half|int|unsigned|char|short|long|bool|signed|__fp16|_Float16|float[2-8]|int[2-8]|vec[2-4]|ivec[2-4]|uint|size_t)\b)"), type});
    rules_.push_back({QRegularExpression(R"(\b\d+(\.\d+)?([eE][+-]?\d+)?[fFuUlL]*\b|\b0x[0-9a-fA-F]+[uUlL]*\b)"), number});
    rules_.push_back({QRegularExpression(R"(#\s*\w+)"), name});
    rules_.push_back({QRegularExpression(R"(//.*$)"), comment});
  }
  rehighlight();
}

void SourceHighlighter::highlightBlock(const QString& text) {
  for (const auto& r : rules_) {
    auto it = r.re.globalMatch(text);
    while (it.hasNext()) {
      auto m = it.next();
      setFormat(m.capturedStart(), m.capturedLength(), r.format);
    }
  }
}

}  // namespace tsv
