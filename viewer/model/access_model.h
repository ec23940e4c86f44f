#pragma once
// What a kernel reads and writes, read off its optimized AST (the graph the opts made, before the expander turns
// UPCAST and UNROLL ranges into lanes): its loops (RANGEs, each with its axis type and size) and, for each INDEX of a
// buffer, the element it addresses as a function of the loops' values, evaluated here without running anything. For
// a point of the loop nest (a value per range) it gives the element of each access (or that a gate keeps it off: a
// padded read); for an output element, the points that store it and everything they read (the reduce and the lanes
// included). The Access pane draws it.
#include <QHash>
#include <QList>
#include <QSet>
#include <QString>
#include <functional>

namespace tsv {

class Session;

class AccessModel {
 public:
  struct Range {
    int uop = -1, id = 0;
    QString type;  // "GLOBAL", "LOCAL", "REDUCE", "UPCAST", "UNROLL", "THREAD", "WEAK", ...
    qint64 size = 1;
  };
  struct Access {
    int index_uop = -1;
    int slot = -1;      // the buffer's PARAM slot (-1: a local or register array)
    QString buffer;     // "buf0 (out)", "buf1", ...
    bool write = false;
    qint64 size = 0;    // the buffer's elements (from the call's arguments, else the largest index + 1)
  };
  // the kernel context's optimized AST (false with *error when the trace lacks it or it has an op the evaluator does not
  // know); `call` (optional) gives the buffers' sizes
  bool load(const Session& s, int kernel_context, int call = -1, QString* error = nullptr);
  const QList<Range>& ranges() const { return ranges_; }
  const QList<Access>& accesses() const { return accesses_; }
  // the element each access addresses at a point (one value per range, in ranges() order); -1 where its gate is off
  QList<qint64> at(const QList<qint64>& point) const;
  // the element each access's index names at a point whatever its gate says (a padded read's would-be element, which
  // may lie outside the buffer), and in *on (optional) whether its gate lets it through (true where it has none)
  QList<qint64> ungated_at(const QList<qint64>& point, QList<bool>* on = nullptr) const;
  // every point of the loop nest in order, the last range fastest (fine for the sizes a teaching example has: nothing
  // when the nest has more than `limit` points)
  void for_each_point(const std::function<void(const QList<qint64>&)>& f, qint64 limit = 4'000'000) const;
  // output element `element` of the written buffer `slot`: the elements of each buffer the points that store it read
  // (slot -> elements), and those points' count
  QHash<int, QSet<qint64>> reads_of_output(int slot, qint64 element, int* points = nullptr) const;
  // the first point, in the nest's order, that stores output element `element` of buffer `slot` (empty: none)
  QList<qint64> first_point_writing(int slot, qint64 element) const;
  // the elements of each buffer read and written (slot -> elements, writes under -1 - slot) as the ranges not fixed in
  // `fixed` (range position -> value) take all their values; local and register arrays (slot -1) left out (their
  // keys would be those of buf0's writes and reads)
  QHash<int, QSet<qint64>> footprint(const QHash<int, qint64>& fixed) const;
  // what one thread or one work-group runs: on a CPU, a THREAD range's value is a core's chunk (every other loop runs
  // in it); on a GPU, the GLOBAL ranges' values are a work-group's id (its LOCAL, GROUP_REDUCE, reduce and lane loops
  // run in it; a kernel with LOCAL ranges and no GLOBAL one is one work-group). "thread", "work-group", or "" when the
  // kernel has neither (one thread runs it all).
  QString group_kind() const;
  // the positions of the ranges that name the thread or work-group (empty when group_kind() is "")
  QList<int> group_ranges() const;
  // the elements of each written buffer (slot -> elements) that the thread or work-group of `point` writes
  QHash<int, QSet<qint64>> group_writes(const QList<qint64>& point) const;

 private:
  // the accesses' index and gate expressions compiled: integer ops over constants and the ranges, operands first
  struct Node {
    int op = 0;
    int a = -1, b = -1, c = -1;  // operand nodes
    qint64 value = 0;            // a constant's value, a range's position
  };
  QList<qint64> eval(const QList<qint64>& point) const;  // every node's value at a point
  QList<Node> nodes_;
  QList<Range> ranges_;
  QHash<int, int> range_pos_;  // RANGE uop -> its position in ranges_
  QList<Access> accesses_;
  QList<int> gates_;           // per access: its gate's node (-1: none)
  QList<int> exprs_;           // per access: its index expression's node
};

}  // namespace tsv
