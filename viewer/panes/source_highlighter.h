#pragma once
#include <QRegularExpression>
#include <QSyntaxHighlighter>

namespace tsv {

// A small rule-table highlighter for the languages kernels are rendered in: C, LLVM IR, GLSL.
class SourceHighlighter : public QSyntaxHighlighter {
  Q_OBJECT
 public:
  explicit SourceHighlighter(QTextDocument* doc);
  void set_language(const QString& lang);  // "c", "llvm", "glsl"; anything else: C rules
  void set_dark(bool dark);

 protected:
  void highlightBlock(const QString& text) override;

 private:
  struct Rule {
    QRegularExpression re;
    QTextCharFormat format;
  };
  void rebuild();
  QList<Rule> rules_;
  QString lang_ = "c";
  bool dark_ = false;
};

}  // namespace tsv
