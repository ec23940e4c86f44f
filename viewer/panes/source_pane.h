#pragma once
#include <QHash>
#include <QWidget>

#include "viewer/model/selection_model.h"

class QLabel;
class QPlainTextEdit;
class QToolButton;

namespace tsv {
class SourceHighlighter;

// The selected kernel's generated source (C, LLVM IR, ...), highlighted; the cursor line is the selected line.
// The Assembly button shows the host machine code instead: the pane asks for it with assembly_wanted() (the
// viewer does not compile anything) and shows what set_assembly() hands back, cached per program. The UOps button
// shows the linearized program the renderer rendered, one uop a line (linear_listing), on every device.
class SourcePane : public QWidget {
  Q_OBJECT
 public:
  SourcePane(SelectionModel* selection, QWidget* parent = nullptr);
  QString text() const;
  QString title() const;
  QString title_tip() const;  // the title's tooltip: where the opts came from, what the compiler reported, the opts' meaning

  // What the pane shows of a source (a trace is untrusted: its source can be one line of 70 MB): each line up to
  // kMaxLineChars, and up to kMaxShownChars or kMaxShownLines in all; `note` says what was cut ("" if nothing).
  static constexpr int kMaxLineChars = 4000, kMaxShownChars = 2'000'000, kMaxShownLines = 100'000;
  struct Shown {
    QString text, note;
    int cut_lines = 0;
    bool cut_tail = false;
  };
  static Shown displayed(const QString& src);
  void set_dark(bool dark);
  // switches between the generated source and its assembly
  void show_assembly(bool on);
  bool showing_assembly() const { return asm_mode_; }
  // switches between the generated source and the linearized uops it renders
  void show_uops(bool on);
  bool showing_uops() const { return uops_mode_; }
  void set_assembly(const QString& program_key, const QString& text);

 signals:
  void assembly_wanted(const QString& program_key, const QString& lang, const QString& src);

 private:
  void on_selection(const Selection& s);
  void show_text();
  SelectionModel* selection_;
  QLabel* title_;
  QPlainTextEdit* edit_;
  SourceHighlighter* highlighter_;
  QToolButton* asm_btn_;
  QToolButton* uops_btn_;
  bool source_shown() const { return !asm_mode_ && !uops_mode_; }  // (lines are the selection's source lines)
  Shown shown_;         // the generated source as shown (cut when too long)
  QString shown_key_;   // the program whose text is shown ("" while none, or while the text is replaced)
  QString program_key_; // the selected program: its key and opts (one AST compiled under two opts is two programs)
  int context_ = -1;    // the kernel context that compiled it
  bool asm_mode_ = false;
  bool uops_mode_ = false;
  QHash<QString, QString> assembly_;
};

}  // namespace tsv
