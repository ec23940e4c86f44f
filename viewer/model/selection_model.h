#pragma once
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
  Session* session() const { return session_; }

  void select_call(int call);
  void select_context(int context);
  // a context's rewrite pass (-1: the context itself)
  void select_pass(int context, int pass);
  void select_node(int node);
  void select_source_line(int line);
  void clear();

 signals:
  void changed(const tsv::Selection& now);

 private:
  void set(const Selection& s);
  void select_context_quiet(int context, Selection* out) const;
  Session* session_;
  Selection sel_;
};

}  // namespace tsv
