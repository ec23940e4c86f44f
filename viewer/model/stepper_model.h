#pragma once
#include <QAbstractTableModel>
#include <QHash>
#include <QList>
#include <QSet>

#include "viewer/model/session.h"

namespace tsv {

// The rewrite stepper's data: every recorded rule match of one context, in order (pass by pass), and the whole
// graph around each match. The graph before step k is the pass's `before` root with matches 0..k-1 of that pass
// substituted in (their accumulated before -> after map applied to a fixed point, as the reference's VIZ replays a
// rewrite); nodes are hash-consed by (op, dtype, arg, tag, sources), so a replayed node that the trace recorded
// has the trace's id, and nodes the trace never saw get ids above the trace's. One row per step.
class StepperModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { kStep, kPass, kRule, kLocation, kColumns };
  enum Role { kPassRole = Qt::UserRole + 1, kMatchRole, kRuleKeyRole };  // kRuleKeyRole: RuleCountsModel::key() of the rule
  struct Step {
    int pass = -1, match = -1;  // indices into the context's passes and that pass's matches
  };
  // One step's graphs: the whole graph before and after the match (exact) or, when the replay could not find the
  // matched node in the graph, the matched subgraph alone before and after (exact == false).
  struct Frame {
    int before = -1, after = -1;  // root node ids (node() resolves them)
    bool exact = false;
    QSet<int> removed;         // the matched node and what goes with it: gone from `after`
    QSet<int> added;           // the replacement's new nodes
    QSet<int> rebuilt_before;  // users of the matched node: rebuilt over the replacement (exact frames only)
    QSet<int> rebuilt_after;   // ... and what they became
    int repeat_of = -1;        // the step this one repeats: the same rewrite met again through another user
  };

  explicit StepperModel(Session* session, QObject* parent = nullptr);

  // shows the steps of this context (-1: none); resets the model when it changes
  void set_context(int context);
  int context() const { return context_; }
  int step_count() const { return steps_.size(); }
  const Step& step(int k) const { return steps_[k]; }
  const Match& match(int k) const;
  const Pass& pass_of(int k) const;
  // the first step of a pass, or -1 if it recorded no matches
  int first_step_of_pass(int pass) const;
  // rewrites the context's passes counted but did not list (a trace recorded at the "passes" level)
  int unlisted_matches() const { return unlisted_; }

  // the graphs around step k (replays the pass up to k on first use; later calls are cached)
  Frame frame(int k);
  // the replayed root after every match of `pass` (its `before` root when it has none), -1 if the replay failed
  int replayed_result(int pass);
  // true when replaying every match of `pass` ends at the graph the trace recorded as the pass's `after`
  bool pass_reproduced(int pass);

  // One layout for a run of steps of one pass (a window): every node their graphs show, before and after each step,
  // where a node that a step rebuilt over new sources takes the place of the node it stands for (a place is named by
  // the id of the first node there), so that stepping through the window only recolours. Greedy from the pass's first
  // step: a window grows while its graphs hold at most max_places places together. A step whose own two graphs hold
  // more, or that the replay could not place, has no window (pass == -1): it is laid out on its own.
  struct Window {
    int pass = -1, first = -1, last = -1;  // the steps [first, last]
    QList<int> places;                     // ascending
    QHash<int, int> place_of;              // every node of the window's graphs -> its place
    QList<QPair<int, int>> edges;          // place -> place, source to user (twice where a node uses a source twice)
    int step_places = 0;                   // without a window: the places the step's two graphs hold
  };
  Window window(int step, int max_places);

  // a node of the trace or of the replay, nullptr if unknown
  const Uop* node(int id) const;
  bool is_replay_node(int id) const { return id >= first_built_; }
  // the id standing for this trace node's structure in the current context (equal structure, equal id)
  int canonical(int id);
  // every node under root (root included)
  QSet<int> nodes_under(int root) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

 private:
  struct Replay {
    QList<int> roots;       // roots[j]: the graph after the pass's first j matches
    QList<int> matched;     // matched[j]: the node of roots[j] that match j rewrote, -1 if the replay lacks it
    QList<int> repeat_of;   // repeat_of[j]: the earlier match of the pass that match j repeats, or -1
    QHash<int, int> map;    // the accumulated before -> after substitutions
    QHash<int, int> image;  // each node of roots[0] -> what stands for it in roots.last()
    QHash<int, int> first;  // a before node -> the first match that rewrote it
    QList<QHash<int, int>> rebuilt;  // rebuilt[j]: the nodes match j rebuilt over new sources -> what they became
    bool failed = false;    // the replay gave up (too deep, a cycle): later steps are shown as matched subgraphs
  };
  // the places of a pass's replayed graphs (see Window), graph by graph as far as needed
  struct Places {
    QList<QList<int>> graphs;  // graphs[j]: the nodes of the replay's roots[j]
    QHash<int, int> place_of;
  };
  Places& places(int pass, int upto);  // graphs [0, upto] (fewer where the replay stopped)
  struct Windows {
    int max_places = -1;
    QList<Window> list;  // from the pass's first step on, one per laid-out run of steps or windowless step
    int next = 0;        // the match the next window starts at
  };
  void rebuild();
  void reset_replay();
  Replay& replay(int pass, int upto);
  int cons(const Uop& shape, const QList<int>& src);
  int rebuild(const Uop& old, const QList<int>& src);
  int substitute(int id, const QHash<int, int>& map, QHash<int, int>& memo, int depth, QHash<int, int>* rebuilt = nullptr);
  int resolve(int id, const QHash<int, int>& map) const;

  Session* session_;
  int context_ = -1;
  QList<Step> steps_;
  int unlisted_ = 0;
  // per context: hash-consing of trace nodes and replayed nodes
  QHash<QString, int> cons_;
  QHash<int, int> canon_;
  QHash<int, Uop> built_;
  int first_built_ = 1 << 30;
  int next_built_ = 1 << 30;
  QHash<int, Replay> replays_;  // by pass index
  QHash<int, Places> places_;     // by pass index
  QHash<int, Windows> windows_;  // by pass index
};

}  // namespace tsv
