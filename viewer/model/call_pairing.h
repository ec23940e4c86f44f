#pragma once
#include <QHash>
#include <QList>
#include <QString>

#include "viewer/model/output_compare.h"

namespace tsv {
class Session;

// What each call of a run computes, named so that the same computation on another device (or in an edited script) has
// the same key: kernels that got other names there (other opts) still match, and the keys leave out what only the
// device decides (device names, kernel names, buffer numbering).
//   computation: a hash of the tensor-graph node the call's LINEAR item realizes ("computes") with every node above it,
//     each node by its op, dtype, shape and its argument with quoted names left out; a call that realizes no tensor node
//     (an intermediate buffer) hashes its kernel AST the same way; a call the trace has no LINEAR item for is its
//     `shape` and, for a kernel, its name
//   shape: the call's kind and its buffers' sizes and dtypes (what a call of an edited computation keeps)
struct CallKeys {
  QList<quint64> computation, shape;
};
CallKeys call_keys(const Session& s);

// One row of two runs side by side: a call of the first run, of the second, or both.
struct CallPair {
  enum class By {
    Computation,  // both compute the same thing (their computation keys are equal)
    Shape,        // no call of the other run computes the same thing here; these two have the same kind and buffers
    None,         // one side only
  };
  int a = -1, b = -1;
  By by = By::None;
};

// The two runs' calls aligned as sequences: first the longest common subsequence of their computation keys (an
// inserted or removed call shifts nothing after it), then, within each stretch between two such matches, the longest
// common subsequence of their shape keys; what is left is a row of one side.
class CallPairing {
 public:
  void build(const Session& a, const Session& b);
  void clear();
  const QList<CallPair>& rows() const { return rows_; }
  int row_of_a(int call) const { return row_a_.value(call, -1); }
  int row_of_b(int call) const { return row_b_.value(call, -1); }
  // the other run's call paired with this one, or -1
  int b_of_a(int call) const;
  int a_of_b(int call) const;
  int paired_rows() const;       // rows with both sides
  int computation_rows() const;  // rows paired by what they compute

 private:
  QList<CallPair> rows_;
  QHash<int, int> row_a_, row_b_;
};

// Aligns two key sequences: the pairs (i, j) of a longest common subsequence, in order. Equal prefixes and suffixes
// are matched first; what is between them goes through the quadratic table when it is small enough
// (`max_cells`), else a greedy forward match (each key of `a` against the next equal key of `b` within a window).
QList<QPair<int, int>> align_keys(const QList<quint64>& a, const QList<quint64>& b, qint64 max_cells = 4'000'000);

// How many ULPs two float buffers of a dtype may differ by and still hold the same result, counted in units of the
// buffer's largest magnitude (a normwise bound: summation order, fused multiply-adds and transcendental approximations
// move small elements of a reduction by many of their own ULPs and not by many of the largest's): float64 and float32
// 16, half 4, bfloat16 2; integers and bools must be equal (0).
double ulp_tolerance(const QString& dtype);

// Two buffers of one computation element by element against that tolerance. An element is beyond it when one side is
// NaN and the other not, the infinities differ, or |a - b| exceeds the tolerance's ULPs of the larger buffer's largest
// finite magnitude; a denormal on one side that is 0 on the other is counted as flushed (a device without denormals:
// lavapipe), beyond the tolerance or not.
struct ToleranceCheck {
  qint64 compared = 0, beyond = 0, flushed = 0;
  double tolerance = 0;  // ulp_tolerance of the dtype
  double scale = 0;      // the largest finite magnitude of the two buffers
  double worst = 0;      // the largest |a - b| in ULPs of the scale
  qint64 first = -1;     // the first element beyond the tolerance or flushed
  double first_a = 0, first_b = 0;
  bool diverges() const { return beyond > 0 || flushed > 0; }
};
ToleranceCheck check_tolerance(const Output& a, const Output& b);

// The first call, in the order of the pairing's rows, whose output buffer (its snapshot, `tinyscope run --snapshots`)
// differs between the two runs beyond its dtype's tolerance (check_tolerance), among the calls paired by computation.
struct Divergence {
  int row = -1, a = -1, b = -1;  // the row and each run's call; -1: none found
  int arg = 0;                   // which of the call's buffers
  ToleranceCheck check;
  QString dtype;
  QList<qint64> shape;           // the buffer's (flat: [elements])
  int compared = 0;              // paired calls whose snapshots were compared (up to and including the divergent one)
  bool snapshots = false;        // both runs kept their calls' buffers
  // the divergent call's inputs: the buffers it reads that an earlier call of both runs wrote (each writer's snapshot
  // against its counterpart's): how many, the largest difference in ULPs of their scale, and whether one diverged
  int inputs = 0;
  double inputs_worst = 0;
  bool inputs_diverge = false;
};
Divergence first_divergence(const Session& a, const Session& b, const CallPairing& p);

}  // namespace tsv

namespace tsv {
struct Program;
// For each line of a program's source (0-based), what statement it is, by the uop of the final program it renders
// (the trace's "lines"): the op (a vector load or store as its scalar one), the dtype's scalar type and, for a load,
// store or index, the kernel argument it addresses ("LOAD|float|1"); lines no uop wrote (the signature, braces) are
// their trimmed text. Two devices' sources of one kernel line up statement by statement on these keys.
QStringList statement_keys(const Session& s, const Program& p);
}  // namespace tsv

namespace tsv {
// One line on how the rows paired: "12 rows: 11 calls paired by what they compute, 1 by its kind and buffers only; 0
// only on CPU, 0 only on VULKAN"
QString pairing_text(const CallPairing& p, const QString& a, const QString& b);
// One line on the first divergence, plain text ("First divergence: call 4, E_3_4 on CPU, E_3_4 on VULKAN: 5 of 12
// elements differ beyond 16 ULP of float (the most 72 ULP; first at [8]: 1.4e-44 vs 0)"), or why there is none (no
// snapshots: how to get them)
QString divergence_text(const Divergence& d, const Session& a, const Session& b, const QString& la, const QString& lb);
}  // namespace tsv

namespace tsv {
// Two sources' lines lined up on their statement keys (a longest common subsequence): each row the line of each side it
// shows (-1: a blank row where that side has no such statement), how many rows have one side only, and how many rows
// of both render the one statement in other words.
struct StatementRows {
  QList<QPair<int, int>> rows;
  int only_a = 0, only_b = 0, reworded = 0;
  int both() const { return int(rows.size()) - only_a - only_b; }
};
StatementRows align_statements(const QStringList& lines_a, const QStringList& keys_a, const QStringList& lines_b,
                               const QStringList& keys_b);
}  // namespace tsv
