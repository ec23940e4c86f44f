#pragma once
#include <QHash>
#include <QObject>
#include <QString>

namespace tsv {
class Session;

// The one current selection every pane follows (qrenderdoc's "current event"). Selecting a call selects its
// kernel context; selecting a kernel context selects its first call. Emits changed() once per change.
struct Selection {
  int context = -1;      // index into Session::contexts()
  int call = -1;         // index into Session::calls()
  QString program_key;   // the selected kernel
  int node = -1;         // a uop id in a graph
  int source_line = -1;  // 1-based line in the selected kernel's source
  int pass = -1;         // a rewrite pass of the selected context: graphs show its result
  bool operator==(const Selection&) const = default;
};

class SelectionModel : public QObject {
  Q_OBJECT
 public:
  explicit SelectionModel(Session* session, QObject* parent = nullptr);
  const Selection& current() const { return sel_; }
  // the kernel context of the selection: the selected context when it compiled a program (a call's is the one that
  // compiled what it ran), else the selected key's; -1 when no kernel is selected
  int kernel_context() const;
  Session* session() const { return session_; }

  void select_call(int call);
  void select_context(int context);
  // a context's rewrite pass (-1: the context itself)
  void select_pass(int context, int pass);
  // a node; in a kernel whose trace says which uop each source line renders, the line rendering it (or, for an
  // expression inlined into a line, the line of its nearest user) is selected with it
  void select_node(int node);
  // a line of the selected kernel's source; the uop it renders is selected with it, shown in the graph of the pass
  // that made the program ("View Output AST")
  void select_source_line(int line);
  // the source line that renders `node` in kernel context `context` (-1: none), and the pass whose graph holds it
  int source_line_of(int context, int node) const;
  int output_pass(int context) const;
  void clear();

 signals:
  void changed(const tsv::Selection& now);

 private:
  void set(const Selection& s);
  void select_context_quiet(int context, Selection* out) const;
  const QHash<int, int>& lines_of(int context) const;
  Session* session_;
  mutable QHash<int, QHash<int, int>> line_of_node_;  // per kernel context: uop -> the source line rendering it
  Selection sel_;
};

}  // namespace tsv
